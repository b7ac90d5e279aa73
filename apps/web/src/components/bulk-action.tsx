"use client";

import type * as React from "react";
import type { FieldValues, SubmitHandler, UseFormReturn } from "react-hook-form";
import { ApiForm } from "./forms/api-form";
import { Button } from "./ui/button";
import { Popover, PopoverContent, PopoverTrigger } from "./ui/popover";

/**
 * A bulk action on a table's selected rows: a toolbar button that says how many rows it would
 * act on, opening a panel with the action's form (one column: the panel is narrow) and whatever
 * the form shows after it ran. The form is named by `formLabel`, or by the button's label.
 */
export function BulkActionPanel<In extends FieldValues, Out>(props: {
  icon: React.ReactNode;
  label: string;
  count: number;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  testId?: string;
  form: UseFormReturn<In, unknown, Out>;
  formLabel?: string;
  pending: boolean;
  onSubmit: SubmitHandler<Out>;
  children: React.ReactNode;
}) {
  return (
    <Popover open={props.open} onOpenChange={props.onOpenChange}>
      <PopoverTrigger asChild>
        <Button type="button" variant="outline" size="sm" data-testid={props.testId}>
          {props.icon}
          {props.label}
          {props.count > 0 ? ` (${props.count} selected)` : ""}
        </Button>
      </PopoverTrigger>
      <PopoverContent align="end" className="w-96">
        <ApiForm
          form={props.form}
          label={props.formLabel ?? props.label}
          className="sm:grid-cols-1"
          pending={props.pending}
          onSubmit={props.onSubmit}
        >
          {props.children}
        </ApiForm>
      </PopoverContent>
    </Popover>
  );
}
