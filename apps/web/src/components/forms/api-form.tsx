"use client";

import type * as React from "react";
import type { FieldValues, SubmitHandler, UseFormReturn } from "react-hook-form";
import { cn } from "~/lib/utils";
import { Form } from "../ui/form";

/**
 * The layout every console form shares: fields in a responsive grid that wraps to one column on
 * phones, submitted through react-hook-form (validated first, so nothing invalid is sent).
 */
export function ApiForm<In extends FieldValues, Out>(props: {
  form: UseFormReturn<In, unknown, Out>;
  onSubmit: SubmitHandler<Out>;
  label: string;
  className?: string;
  children: React.ReactNode;
}) {
  return (
    <Form {...props.form}>
      <form
        aria-label={props.label}
        noValidate
        onSubmit={props.form.handleSubmit(props.onSubmit)}
        className={cn(
          "grid grid-cols-1 gap-4 sm:grid-cols-[repeat(auto-fill,minmax(12rem,1fr))]",
          props.className,
        )}
      >
        {props.children}
      </form>
    </Form>
  );
}
