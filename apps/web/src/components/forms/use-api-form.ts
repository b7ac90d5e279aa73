"use client";

import type { AppRouter } from "@edgefleet/api";
import { zodResolver } from "@hookform/resolvers/zod";
import type { UseMutationOptions } from "@tanstack/react-query";
import type { TRPCClientErrorLike } from "@trpc/client";
import {
  type DefaultValues,
  type FieldValues,
  type Path,
  type UseFormReturn,
  useForm,
} from "react-hook-form";
import type { z } from "zod";
import { formErrorMap } from "./text-fields";

export type ApiError = TRPCClientErrorLike<AppRouter>;
type ErrorCode = ApiError["data"] extends infer D ? (D extends { code: infer C } ? C : string) : string;
/** The field an error code of the server belongs on, or [field, pattern its message must match]. */
export type FieldForCode<Values extends FieldValues> = Partial<
  Record<ErrorCode, Path<Values> | [Path<Values>, RegExp]>
>;

/**
 * A console form validated by a zod schema of the API (from @edgefleet/api/schemas, or one derived
 * from it), on blur and then on every change, so a field is judged by the same rule on both sides.
 * The form holds the schema's input type and hands `onSubmit` its parsed output.
 */
export function useApiForm<Schema extends z.ZodType<FieldValues, FieldValues>>(
  schema: Schema,
  defaultValues: DefaultValues<z.input<Schema>>,
  /** "onChange" judges every keystroke (filters, which apply as they are typed). */
  mode: "onTouched" | "onChange" = "onTouched",
): UseFormReturn<z.input<Schema>, unknown, z.output<Schema>> {
  return useForm<z.input<Schema>, unknown, z.output<Schema>>({
    // biome-ignore lint/suspicious/noExplicitAny: the resolver's overloads cannot see through the generic schema
    resolver: zodResolver(schema as any, { error: formErrorMap }) as never,
    defaultValues,
    mode,
  });
}

/**
 * A tRPC mutation as a form takes it (`trpc.site.update.mutationOptions()`): the form makes its own
 * mutation of it, with what its success and refusal do.
 */
export type MutationRun<Input, Output> = Pick<
  UseMutationOptions<Output, unknown, Input>,
  "mutationKey" | "mutationFn"
>;

/**
 * Puts the server's refusal where it belongs: zod issues (`data.zodError`, see the API's
 * errorFormatter) on their fields, codes the form names (e.g. CONFLICT → the name field, or
 * NOT_FOUND → the site field when the message is about the site) on that field, anything else on the form as a whole (shown by FormFooter).
 */
export function showServerError<Values extends FieldValues>(
  form: UseFormReturn<Values, unknown, unknown>,
  error: ApiError,
  fieldForCode: FieldForCode<Values> = {},
): void {
  const known = new Set(Object.keys(form.getValues()));
  const zod = error.data?.zodError;
  let shown = false;
  for (const [field, messages] of Object.entries(zod?.fieldErrors ?? {})) {
    const message = (messages as string[] | undefined)?.[0];
    if (message && known.has(field)) {
      form.setError(field as Path<Values>, { type: "server", message }, { shouldFocus: !shown });
      shown = true;
    }
  }
  if (shown) return;
  const code = error.data?.code as ErrorCode | undefined;
  const rule = code ? fieldForCode[code] : undefined;
  // A [field, pattern] rule applies only to messages about that field (e.g. "site … not found").
  const field = Array.isArray(rule) ? (rule[1].test(error.message) ? rule[0] : undefined) : rule;
  if (field) {
    form.setError(field, { type: "server", message: error.message }, { shouldFocus: true });
    return;
  }
  const message = zod
    ? [...zod.formErrors, ...Object.values(zod.fieldErrors).flat()].join("; ")
    : error.message;
  form.setError("root.server", { type: "server", message: message || error.message });
}
