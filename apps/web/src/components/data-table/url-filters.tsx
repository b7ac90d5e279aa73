"use client";

import { useEffect, useRef } from "react";
import { type DefaultValues, type FieldValues, type UseFormReturn, useWatch } from "react-hook-form";
import type { z } from "zod";
import { useApiForm } from "../forms/use-api-form";
import { Card } from "../ui/card";
import { Form } from "../ui/form";
import { useUrlState } from "./use-url-state";

type TextValues = Record<string, string>;

/**
 * A list's filters as a form kept in the address bar (shareable, survives a reload). Each field is
 * judged by the API's schema as it is typed, and only a set of values that passes is written to
 * the address and returned as `applied`: the list never asks the server with a filter it would
 * refuse, and keeps its last good rows while a filter is half-typed. `keys` maps each field to
 * its search parameter.
 */
export function useUrlFilters<Schema extends z.ZodType<TextValues, TextValues>>(
  schema: Schema,
  keys: { [Field in keyof z.input<Schema>]: string },
) {
  const url = useUrlState();
  const fields = Object.keys(keys) as Array<keyof z.input<Schema> & string>;
  const initial = Object.fromEntries(fields.map((field) => [field, url.get(keys[field]) ?? ""]));
  const form = useApiForm(schema, initial as DefaultValues<z.input<Schema>>, "onChange");
  const values = useWatch({ control: form.control }) as TextValues;
  const parsed = schema.safeParse(values);
  const lastGood = useRef<z.output<Schema> | null>(null);
  if (parsed.success) lastGood.current = parsed.data;
  const applied = lastGood.current ?? (Object.fromEntries(fields.map((f) => [f, ""])) as z.output<Schema>);

  // The address as a string, so that the effect runs when (and only when) it changes.
  const address = JSON.stringify(
    Object.fromEntries(fields.map((field) => [keys[field], (applied as TextValues)[field] || null])),
  );
  const setUrl = url.set;
  useEffect(() => setUrl(JSON.parse(address)), [address, setUrl]);

  return { form, applied };
}

/** The filters' card: labelled fields (TextField, SelectField) in a row that wraps on phones. */
export function FilterCard<Values extends FieldValues, Out>(props: {
  form: UseFormReturn<Values, unknown, Out>;
  className?: string;
  children: React.ReactNode;
}) {
  return (
    <Form {...props.form}>
      <Card aria-label="Filters" className={props.className}>
        {/* Filters apply as they are typed: Enter must not reload the page. */}
        <form noValidate onSubmit={(event) => event.preventDefault()} className="contents">
          {props.children}
        </form>
      </Card>
    </Form>
  );
}
