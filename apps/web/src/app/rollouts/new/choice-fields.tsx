"use client";

import { type FieldPath, type FieldValues, useFormContext } from "react-hook-form";
import { Checkbox } from "~/components/ui/checkbox";
import { FormField, FormItem, FormMessage } from "~/components/ui/form";
import { Label } from "~/components/ui/label";

/** Several choices of one list field (sites, week days) as labelled checkboxes in a fieldset. */
export function CheckboxGroupField<Values extends FieldValues>(props: {
  name: FieldPath<Values>;
  legend: string;
  options: Array<{ value: string; label: string }>;
  className?: string;
}) {
  const { control } = useFormContext<Values>();
  return (
    <FormField
      control={control}
      name={props.name}
      render={({ field }) => {
        const chosen = new Set<string>(field.value ?? []);
        return (
          <FormItem className={props.className}>
            <fieldset className="grid gap-2">
              <legend className="mb-2 text-sm font-medium">{props.legend}</legend>
              <div className="flex flex-wrap gap-x-4 gap-y-2">
                {props.options.map((option) => {
                  const id = `${field.name}-${option.value}`;
                  return (
                    <span key={option.value} className="flex items-center gap-2">
                      <Checkbox
                        id={id}
                        checked={chosen.has(option.value)}
                        onBlur={field.onBlur}
                        onCheckedChange={(checked) => {
                          const next = new Set(chosen);
                          if (checked === true) next.add(option.value);
                          else next.delete(option.value);
                          field.onChange(props.options.map((o) => o.value).filter((v) => next.has(v)));
                        }}
                      />
                      <Label htmlFor={id} className="font-normal">
                        {option.label}
                      </Label>
                    </span>
                  );
                })}
              </div>
            </fieldset>
            <FormMessage />
          </FormItem>
        );
      }}
    />
  );
}
