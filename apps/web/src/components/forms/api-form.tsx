"use client";

import * as React from "react";
import type { FieldValues, SubmitHandler, UseFormReturn } from "react-hook-form";
import { cn } from "~/lib/utils";
import { Form } from "../ui/form";
import { FieldNounProvider } from "./fields";

/** What ApiForm tells its FormFooter: whether the submission is still under way. */
const SubmissionPending = React.createContext(false);

export function useSubmissionPending(): boolean {
  return React.useContext(SubmissionPending);
}

/** Submitting hands the parsed values to one mutation, pending while it runs. */
interface MutationSubmit<Out> {
  mutation: { mutate: (values: Out) => void; isPending: boolean };
}

/** Submitting runs `onSubmit`; `pending` says when whatever it started is still running. */
interface HandlerSubmit<Out> {
  onSubmit: SubmitHandler<Out>;
  pending?: boolean;
}

/**
 * The layout every console form shares: fields in a responsive grid that wraps to one column on
 * phones, submitted through react-hook-form (validated first, so nothing invalid is sent). The
 * FormFooter inside shows the submission's pending state without being told again.
 */
export function ApiForm<In extends FieldValues, Out>(
  props: {
    form: UseFormReturn<In, unknown, Out>;
    label: string;
    /** What the fields are of ("Key"): each is read as "<noun> <label>" unless it says otherwise. */
    noun?: string;
    className?: string;
    children: React.ReactNode;
  } & (MutationSubmit<Out> | HandlerSubmit<Out>),
) {
  const submit: SubmitHandler<Out> =
    "mutation" in props ? (values) => props.mutation.mutate(values) : props.onSubmit;
  const pending = "mutation" in props ? props.mutation.isPending : Boolean(props.pending);
  return (
    <Form {...props.form}>
      <form
        aria-label={props.label}
        noValidate
        onSubmit={props.form.handleSubmit(submit)}
        className={cn(
          "grid grid-cols-1 gap-4 sm:grid-cols-[repeat(auto-fill,minmax(12rem,1fr))]",
          props.className,
        )}
      >
        <SubmissionPending.Provider value={pending}>
          <FieldNounProvider value={props.noun}>{props.children}</FieldNounProvider>
        </SubmissionPending.Provider>
      </form>
    </Form>
  );
}
