"use client";

import * as React from "react";
import { type FieldPath, type FieldValues, useFormContext } from "react-hook-form";
import { cn } from "~/lib/utils";
import { Checkbox } from "../ui/checkbox";
import { FormControl, FormDescription, FormField, FormItem, FormLabel, FormMessage } from "../ui/form";
import { Input } from "../ui/input";
import { Label } from "../ui/label";
import { NativeSelect } from "../ui/native-select";
import { type SelectOption, selectOptions } from "./select-options";

/**
 * What the fields inside are of ("Key", "Batch 2"), set by an ApiForm's `noun` or a FieldGroup's
 * caption: a page holds several "Name" fields, so each is read as "<noun> <label>" ("Key name").
 */
const FieldNoun = React.createContext<string | undefined>(undefined);
export const FieldNounProvider = FieldNoun.Provider;

/** A field's name for screen readers (and tests): told, or its label after its form's noun. */
function useAccessibleName(label: string, accessibleName: string | undefined): string | undefined {
  const noun = React.useContext(FieldNoun);
  return accessibleName ?? (noun ? `${noun} ${label.toLowerCase()}` : undefined);
}

interface FieldProps<Values extends FieldValues> {
  name: FieldPath<Values>;
  label: string;
  /** Where "<noun> <label>" does not say it ("Channel target" for "To"). */
  accessibleName?: string;
  description?: React.ReactNode;
  className?: string;
}

/** A labelled text input with its rule's message under it. */
export function TextField<Values extends FieldValues>(
  props: FieldProps<Values> & Omit<React.ComponentProps<"input">, "name">,
) {
  const { name, label, accessibleName, description, className, ...input } = props;
  const { control } = useFormContext<Values>();
  const ariaLabel = useAccessibleName(label, accessibleName);
  return (
    <FormField
      control={control}
      name={name}
      render={({ field }) => (
        <FormItem className={className}>
          <FormLabel>{label}</FormLabel>
          <FormControl>
            <Input aria-label={ariaLabel} {...input} {...field} value={field.value ?? ""} />
          </FormControl>
          {description ? <FormDescription>{description}</FormDescription> : null}
          <FormMessage />
        </FormItem>
      )}
    />
  );
}

/**
 * The name of what a form creates: the `name` field, "Name" on screen (read as "<noun> name").
 * Names the API keeps are at most 100 characters unless told.
 */
export function NameField(props: { placeholder: string; maxLength?: number }) {
  return (
    <TextField<{ name: string }>
      name="name"
      label="Name"
      placeholder={props.placeholder}
      maxLength={props.maxLength ?? 100}
    />
  );
}

/**
 * A labelled native select; `parse` turns the option's string back into the field's value. Fixed
 * choices can be written as `{ value: label }` in the order shown (see selectOptions).
 */
export function SelectField<Values extends FieldValues>(
  props: FieldProps<Values> & {
    options: SelectOption[] | Record<string, string>;
    parse?: (value: string) => unknown;
    disabled?: boolean;
  },
) {
  const { control } = useFormContext<Values>();
  const ariaLabel = useAccessibleName(props.label, props.accessibleName);
  const options = selectOptions(props.options);
  return (
    <FormField
      control={control}
      name={props.name}
      render={({ field }) => (
        <FormItem className={props.className}>
          <FormLabel>{props.label}</FormLabel>
          <FormControl>
            <NativeSelect
              aria-label={ariaLabel}
              name={field.name}
              ref={field.ref}
              onBlur={field.onBlur}
              disabled={props.disabled}
              value={field.value === undefined || field.value === null ? "" : String(field.value)}
              onChange={(event) =>
                field.onChange(props.parse ? props.parse(event.target.value) : event.target.value)
              }
            >
              {options.map((option) => (
                <option key={option.value} value={option.value} disabled={option.disabled}>
                  {option.label}
                </option>
              ))}
            </NativeSelect>
          </FormControl>
          {props.description ? <FormDescription>{props.description}</FormDescription> : null}
          <FormMessage />
        </FormItem>
      )}
    />
  );
}

export function CheckboxField<Values extends FieldValues>(props: FieldProps<Values>) {
  const { control } = useFormContext<Values>();
  return (
    <FormField
      control={control}
      name={props.name}
      render={({ field }) => (
        <FormItem className={cn("flex items-center gap-2 self-end pb-2", props.className)}>
          <FormControl>
            <Checkbox
              checked={Boolean(field.value)}
              onCheckedChange={(checked) => field.onChange(checked === true)}
              onBlur={field.onBlur}
              ref={field.ref}
            />
          </FormControl>
          <FormLabel className="font-normal">{props.label}</FormLabel>
          <FormMessage />
        </FormItem>
      )}
    />
  );
}

/** Several choices of one list field (a rollout's sites, a window's week days) as labelled checkboxes in a fieldset. */
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
