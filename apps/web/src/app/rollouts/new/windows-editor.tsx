"use client";

import { WEEKDAYS } from "@edgefleet/api/schemas";
import { PlusIcon } from "lucide-react";
import { useFieldArray, useFormContext } from "react-hook-form";
import { FieldGroup, FieldGroups } from "~/components/forms/field-groups";
import { Button } from "~/components/ui/button";
import { CheckboxGroupField, SelectField, TextField } from "./fields";
import type { RolloutFormValues } from "./rollout-form";

const DAY_OPTIONS = WEEKDAYS.map((day) => ({ value: day, label: day }));

/**
 * Maintenance windows per site, in the site's own time zone: a site outside its windows gets no
 * new updates until one opens (the live page says until when). Sites without windows are always open.
 */
export function WindowsEditor(props: { siteOptions: Array<{ value: string; label: string }> }) {
  const { control } = useFormContext<RolloutFormValues>();
  const windows = useFieldArray({ control, name: "windows" });
  return (
    <FieldGroups
      title="Maintenance windows"
      count={windows.fields.length}
      none="None: every site may update at any time."
      add={
        <Button
          type="button"
          size="sm"
          variant="outline"
          disabled={props.siteOptions.length === 0}
          onClick={() =>
            windows.append({
              siteId: props.siteOptions[0]?.value ?? "",
              days: ["mon", "tue", "wed", "thu", "fri"],
              start: "22:00",
              end: "04:00",
            })
          }
        >
          <PlusIcon aria-hidden />
          Add window
        </Button>
      }
    >
      {windows.fields.map((field, index) => {
        const caption = `Window ${index + 1}`;
        return (
          <FieldGroup key={field.id} caption={caption} onRemove={() => windows.remove(index)}>
            <SelectField name={`windows.${index}.siteId`} label="Site" options={props.siteOptions} />
            <TextField
              name={`windows.${index}.start`}
              label="Opens (site time)"
              accessibleName={`${caption} opens`}
              placeholder="22:00"
            />
            <TextField name={`windows.${index}.end`} label="Closes" placeholder="04:00" />
            <CheckboxGroupField
              name={`windows.${index}.days`}
              legend="Days"
              options={DAY_OPTIONS}
              className="sm:col-span-2"
            />
          </FieldGroup>
        );
      })}
    </FieldGroups>
  );
}
