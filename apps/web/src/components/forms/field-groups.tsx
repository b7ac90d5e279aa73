"use client";

import { Trash2Icon } from "lucide-react";
import type * as React from "react";
import { cn } from "~/lib/utils";
import { Button } from "../ui/button";
import { FieldNounProvider } from "./fields";

/**
 * A form's list of repeated field groups (maintenance windows, a batch's gates): its heading with
 * the controls that add one, what "none" means while there are none, then the groups.
 */
export function FieldGroups(props: {
  title: string;
  /** The button (and any choice) that adds a group. */
  add: React.ReactNode;
  count: number;
  /** What an empty list means, e.g. "None: every site may update at any time." */
  none: string;
  className?: string;
  testId?: string;
  children: React.ReactNode;
}) {
  return (
    <div className={cn("grid gap-3", props.className)} data-testid={props.testId}>
      <div className="flex flex-wrap items-end gap-2">
        <h3 className="mr-auto text-sm font-medium">{props.title}</h3>
        {props.add}
      </div>
      {props.count === 0 ? <p className="text-sm text-muted-foreground">{props.none}</p> : null}
      {props.children}
    </div>
  );
}

/**
 * One repeated group of a form's fields (a batch, a gate, a window): a fieldset captioned by what
 * it is ("Batch 2", which also starts its fields' accessible names), its fields in a grid that wraps on narrow screens, and a button that removes
 * it (none when it may not go, e.g. the only batch).
 */
export function FieldGroup(props: {
  caption: string;
  onRemove: (() => void) | null;
  className?: string;
  testId?: string;
  children: React.ReactNode;
}) {
  return (
    <fieldset
      className={cn(
        "grid gap-4 rounded-lg border p-3 sm:grid-cols-[repeat(auto-fill,minmax(11rem,1fr))]",
        props.className,
      )}
      data-testid={props.testId}
    >
      <legend className="px-1 text-sm font-medium">{props.caption}</legend>
      <FieldNounProvider value={props.caption}>{props.children}</FieldNounProvider>
      {props.onRemove ? (
        <Button
          type="button"
          variant="ghost"
          size="sm"
          className="self-end justify-self-start"
          onClick={props.onRemove}
        >
          <Trash2Icon aria-hidden />
          Remove {props.caption.toLowerCase()}
        </Button>
      ) : null}
    </fieldset>
  );
}

/**
 * The fields of one repeated group (a batch, a gate, the defaults): `field("failureLimit", "failure
 * limit")` is the field named `<prefix>.failureLimit`, read as "<caption> failure limit" ("Batch 1
 * gate 2 failure limit"), where the label on screen ("Nodes allowed outside") would not say it.
 */
export function groupFields<Prefix extends string>(prefix: Prefix, caption: string) {
  return <Field extends string>(field: Field, spoken: string) => ({
    name: `${prefix}.${field}` as const,
    accessibleName: `${caption} ${spoken}`,
  });
}
