"use client";

import type { AppRouter } from "@edgefleet/api";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { TRPCClientErrorLike } from "@trpc/client";
import { useRouter } from "next/navigation";
import type * as React from "react";
import type { z } from "zod";
import { ConfirmAction } from "../confirm-action";
import { Section } from "../ui/card";
import { toast } from "../ui/sonner";
import { ApiForm } from "./api-form";
import { TextField } from "./fields";
import { FormFooter } from "./form-footer";
import { type MutationRun, showServerError, useApiForm } from "./use-api-form";

interface Named {
  id: string;
  name: string;
  description: string | null;
}
type EditSchema = z.ZodType<
  { id: string; name?: string | undefined; description?: string | null | undefined },
  { id: string; name?: string | undefined; description?: string | null | undefined }
>;

/**
 * The "Edit" card of a named thing's page (a site, an app): rename, describe, delete with confirmation.
 * Saving resets the form to what the server kept; a name conflict shows on the name field;
 * deleting goes back to the list (`/<noun>s`). `save` and `remove` are the tRPC mutations
 * (`trpc.site.update.mutationOptions()`).
 */
export function EditNameForm(props: {
  /** "site", "app": in labels ("New site name") and messages. */
  noun: string;
  record: Named;
  schema: EditSchema;
  save: MutationRun<{ id: string; name?: string; description: string | null }, Named>;
  remove: MutationRun<{ id: string }, Named>;
  /** What deleting does (or why the server will refuse it). */
  deleteConsequence: string;
  nameDescription?: React.ReactNode;
  disabledReason: string | null;
}) {
  const router = useRouter();
  const queryClient = useQueryClient();
  const { id, name, description } = props.record;
  const form = useApiForm(props.schema, { id, name, description: description ?? "" });
  const onError = (error: unknown) =>
    showServerError(form, error as unknown as TRPCClientErrorLike<AppRouter>, { CONFLICT: "name" });
  const update = useMutation({
    mutationKey: props.save.mutationKey,
    mutationFn: props.save.mutationFn,
    onSuccess: (saved) => {
      toast.success(`Saved ${saved.name}`);
      form.reset({ id: saved.id, name: saved.name, description: saved.description ?? "" });
      return queryClient.invalidateQueries();
    },
    onError,
  });
  const remove = useMutation({
    mutationKey: props.remove.mutationKey,
    mutationFn: props.remove.mutationFn,
    onSuccess: async (removed) => {
      toast.success(`Deleted ${removed.name}`);
      await queryClient.invalidateQueries();
      router.push(`/${props.noun}s`);
    },
    onError: (error) => form.setError("root.server", { type: "server", message: error.message }),
  });
  return (
    <Section title="Edit">
      <ApiForm
        form={form}
        label={`Edit the ${props.noun}`}
        noun={`New ${props.noun}`}
        className="sm:grid-cols-1"
        pending={update.isPending}
        onSubmit={(values) =>
          update.mutate({
            id,
            ...(values.name !== undefined ? { name: values.name } : {}),
            description: values.description ? values.description : null,
          })
        }
      >
        <TextField name="name" label="Name" description={props.nameDescription} />
        <TextField name="description" label="Description" />
        <FormFooter label="Save" pendingLabel="Saving…" disabledReason={props.disabledReason}>
          <ConfirmAction
            label={`Delete ${props.noun}`}
            variant="destructive"
            size="default"
            question={`Delete ${name}?`}
            consequence={props.deleteConsequence}
            confirmLabel="Yes, delete"
            disabledReason={props.disabledReason}
            pending={remove.isPending}
            onConfirm={() => remove.mutate({ id })}
          />
        </FormFooter>
      </ApiForm>
    </Section>
  );
}
