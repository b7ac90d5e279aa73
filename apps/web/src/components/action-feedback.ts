"use client";

import { type QueryFilters, useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { toast } from "./ui/sonner";

/**
 * What an action outside a form (a row's button, a confirmed dialog) says once the server has
 * answered: what it did as a toast (when `done` words it), then what it changed is read again;
 * a refusal as an error toast in the server's words. Forms show refusals on their fields instead
 * (showServerError). Use: `trpc.x.mutationOptions(feedback(trpc.x.list.queryFilter(), (r) => …))`.
 */
export function useActionFeedback() {
  const queryClient = useQueryClient();
  return useCallback(
    <Result>(changed: QueryFilters | QueryFilters[], done?: (result: Result) => string) => ({
      onSuccess: async (result: Result) => {
        if (done) toast.success(done(result));
        await Promise.all([changed].flat().map((filter) => queryClient.invalidateQueries(filter)));
      },
      onError: (error: { message: string }) => toast.error(error.message),
    }),
    [queryClient],
  );
}
