"use client";

import type { AppRouter } from "@edgefleet/api";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { TRPCClientErrorLike } from "@trpc/client";
import { useRouter } from "next/navigation";
import type * as React from "react";
import { useRef } from "react";
import type { z } from "zod";
import { useFocusTarget } from "../shell/focus-target";
import { Section } from "../ui/card";
import { ApiForm } from "./api-form";
import { NameField, TextField } from "./fields";
import { FormFooter } from "./form-footer";
import { type MutationRun, showServerError, useApiForm } from "./use-api-form";

type CreateSchema = z.ZodType<
  { name: string; description?: string | undefined },
  { name: string; description?: string | undefined }
>;

/**
 * The "New …" card of a list page (sites, apps): name and description, a taken name shown on the
 * name field, then the new thing's page (`/<noun>s/<id>`). The card's id, `new-<noun>`, is also the
 * palette's focus target (`/sites#new-site`). `create` is the tRPC mutation
 * (`trpc.site.create.mutationOptions()`).
 */
export function CreateNameForm(props: {
  /** "site", "app": in the title, labels and buttons. */
  noun: string;
  description: React.ReactNode;
  schema: CreateSchema;
  create: MutationRun<{ name: string; description?: string }, { id: string }>;
  placeholders: { name: string; description: string };
  disabledReason: string | null;
}) {
  const router = useRouter();
  const queryClient = useQueryClient();
  const id = `new-${props.noun}`;
  const ref = useRef<HTMLElement>(null);
  useFocusTarget(id, ref);
  const form = useApiForm(props.schema, { name: "", description: "" });
  const create = useMutation({
    mutationKey: props.create.mutationKey,
    mutationFn: props.create.mutationFn,
    onSuccess: async (created) => {
      await queryClient.invalidateQueries();
      router.push(`/${props.noun}s/${created.id}`);
    },
    onError: (error) =>
      showServerError(form, error as unknown as TRPCClientErrorLike<AppRouter>, { CONFLICT: "name" }),
  });
  const Noun = `${props.noun[0]?.toUpperCase()}${props.noun.slice(1)}`;
  return (
    <Section ref={ref} id={id} title={`New ${props.noun}`} description={props.description}>
      <ApiForm
        form={form}
        label={`Create ${/^[aeiou]/.test(props.noun) ? "an" : "a"} ${props.noun}`}
        noun={Noun}
        pending={create.isPending}
        onSubmit={({ name, description }) => create.mutate({ name, ...(description ? { description } : {}) })}
      >
        <NameField placeholder={props.placeholders.name} maxLength={63} />
        <TextField
          name="description"
          label="Description"
          placeholder={props.placeholders.description}
          maxLength={500}
        />
        <FormFooter
          label={`Create ${props.noun}`}
          pendingLabel="Creating…"
          disabledReason={props.disabledReason}
        />
      </ApiForm>
    </Section>
  );
}
