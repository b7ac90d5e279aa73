"use client";

import { WEEKDAYS } from "@edgefleet/api/schemas";
import { PlusIcon, Trash2Icon } from "lucide-react";
import { useFieldArray, useFormContext } from "react-hook-form";
import { SelectField, TextField } from "~/components/forms/fields";
import { Button } from "~/components/ui/button";
import { CheckboxGroupField } from "./choice-fields";
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
    <div className="grid gap-3">
      <div className="flex flex-wrap items-center gap-2">
        <h3 className="mr-auto text-sm font-medium">Maintenance windows</h3>
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
      </div>
      {windows.fields.length === 0 ? (
        <p className="text-sm text-muted-foreground">None: every site may update at any time.</p>
      ) : null}
      {windows.fields.map((field, index) => {
        const caption = `Window ${index + 1}`;
        return (
          <fieldset
            key={field.id}
            className="grid gap-4 rounded-lg border p-3 sm:grid-cols-[repeat(auto-fill,minmax(11rem,1fr))]"
          >
            <legend className="px-1 text-sm font-medium">{caption}</legend>
            <SelectField<RolloutFormValues>
              name={`windows.${index}.siteId`}
              label="Site"
              accessibleName={`${caption} site`}
              options={props.siteOptions}
            />
            <TextField<RolloutFormValues>
              name={`windows.${index}.start`}
              label="Opens (site time)"
              accessibleName={`${caption} opens`}
              placeholder="22:00"
            />
            <TextField<RolloutFormValues>
              name={`windows.${index}.end`}
              label="Closes"
              accessibleName={`${caption} closes`}
              placeholder="04:00"
            />
            <CheckboxGroupField<RolloutFormValues>
              name={`windows.${index}.days`}
              legend="Days"
              options={DAY_OPTIONS}
              className="sm:col-span-2"
            />
            <Button
              type="button"
              variant="ghost"
              size="sm"
              className="self-end justify-self-start"
              onClick={() => windows.remove(index)}
            >
              <Trash2Icon aria-hidden />
              Remove {caption.toLowerCase()}
            </Button>
          </fieldset>
        );
      })}
    </div>
  );
}
