"use client";

import { type QueryFilters, useQueryClient } from "@tanstack/react-query";
import type { FieldValues, UseFormReturn } from "react-hook-form";
import { type ApiError, type FieldForCode, showServerError } from "./use-api-form";

/**
 * What a form's mutation does once the server has answered, the form's counterpart of
 * useActionFeedback: `done` with what the server made (say it, reset the form, show a secret), then
 * what it changed is read again (the mutation stays pending until it is); a refusal goes onto the
 * form's fields, where it can be fixed (showServerError, with `fieldForCode`).
 * Use: `trpc.x.create.mutationOptions(formFeedback(trpc.x.list.pathFilter(), (made) => …))`.
 */
export function useFormFeedback<Values extends FieldValues>(
  form: UseFormReturn<Values, unknown, unknown>,
  fieldForCode?: FieldForCode<Values>,
) {
  const queryClient = useQueryClient();
  return <Result>(changed: QueryFilters | QueryFilters[], done: (result: Result) => void) => ({
    onSuccess: async (result: Result) => {
      done(result);
      await Promise.all([changed].flat().map((filter) => queryClient.invalidateQueries(filter)));
    },
    onError: (error: ApiError) => showServerError(form, error, fieldForCode),
  });
}
