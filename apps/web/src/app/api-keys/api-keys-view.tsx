"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { roleAtLeast } from "@edgefleet/api/roles";
import { createApiKeyInput } from "@edgefleet/api/schemas";
import { useMutation, useQuery } from "@tanstack/react-query";
import { KeyRoundIcon } from "lucide-react";
import { useRef, useState } from "react";
import { z } from "zod";
import { useActionFeedback } from "~/components/action-feedback";
import { ConfirmAction } from "~/components/confirm-action";
import { CopyOnce } from "~/components/copy-once";
import { actionsColumn, stateColumn, timeColumn } from "~/components/data-table/columns";
import type { DataColumn } from "~/components/data-table/data-table";
import { QueryTable } from "~/components/data-table/query-table";
import { ApiForm } from "~/components/forms/api-form";
import { NameField, SelectField, TextField } from "~/components/forms/fields";
import { useFormFeedback } from "~/components/forms/form-feedback";
import { FormFooter } from "~/components/forms/form-footer";
import { textFor } from "~/components/forms/text-fields";
import { useApiForm } from "~/components/forms/use-api-form";
import { relativeTime } from "~/components/relative-time";
import { roleDenial } from "~/components/role-reason";
import { type Role, roleOptions } from "~/components/role-select";
import { useFocusTarget } from "~/components/shell/focus-target";
import { Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { useTRPC } from "~/trpc/react";

type ApiKey = RouterOutputs["apiKey"]["list"]["items"][number];

/** The API's createKey input; the date input gives a day, and the key stays valid until its end, local time. */
const keyForm = createApiKeyInput.extend({
  expiresAt: textFor(
    z.string().transform((day) => (day ? new Date(`${day}T23:59:59`) : undefined)),
    createApiKeyInput.shape.expiresAt,
  ),
});

const noKeys = (
  <EmptyState icon={<KeyRoundIcon />} title="No API keys yet">
    Scripts, CI and the Terraform provider use keys. Create one above with the least role it needs.
  </EmptyState>
);

export function ApiKeysView() {
  const trpc = useTRPC();
  // The caller's role comes from the member list (any member may read it); keys need admin.
  const members = useQuery(trpc.member.list.queryOptions());
  const keys = useQuery(trpc.apiKey.list.queryOptions(undefined, { retry: false }));
  const feedback = useActionFeedback();
  const revoke = useMutation(
    trpc.apiKey.revoke.mutationOptions(
      feedback(trpc.apiKey.list.queryFilter(), (key) => `API key “${key.name}” revoked`),
    ),
  );
  const myRole = members.data?.caller.role ?? null;
  // null until the member list is in: a creator is not called a former member before we know.
  const emailByUserId = members.data ? new Map(members.data.items.map((m) => [m.userId, m.email])) : null;
  const denied = myRole ? roleDenial(myRole, "admin") : null;
  const columns: DataColumn<ApiKey>[] = [
    { id: "name", accessorKey: "name", meta: { title: "Name", className: "font-medium" } },
    { id: "role", accessorKey: "role", meta: { title: "Role" } },
    {
      id: "prefix",
      accessorKey: "prefix",
      enableSorting: false,
      meta: { title: "Key", className: "font-mono" },
      cell: ({ row }) => `${row.original.prefix}…`,
    },
    {
      id: "createdBy",
      accessorFn: (key) => describeCreator(key.createdBy, emailByUserId),
      meta: { title: "Created by", className: "break-all" },
    },
    timeColumn("created", "Created", (key) => key.createdAt),
    timeColumn("lastUsed", "Last used", (key) => key.lastUsedAt),
    stateColumn(keyState, "api-key-state"),
    actionsColumn((key) =>
      key.revokedAt ? null : (
        <ConfirmAction
          label="Revoke"
          question={`Revoke “${key.name}”?`}
          consequence="Scripts using it stop working at once."
          disabledReason={denied}
          pending={revoke.isPending}
          onConfirm={() => revoke.mutate({ id: key.id })}
        />
      ),
    ),
  ];

  return (
    <>
      <CreateKeyForm myRole={myRole} disabledReason={denied} />
      <Section title="Keys">
        <QueryTable
          query={keys}
          label="API keys"
          columnChooser
          columns={columns}
          rowTestId="api-key-row"
          empty={noKeys}
        />
      </Section>
    </>
  );
}

function keyState(key: ApiKey): { label: string; variant: "online" | "revoked" | "pending" } {
  if (key.revokedAt) return { label: `revoked ${relativeTime(key.revokedAt)}`, variant: "revoked" };
  if (key.expiresAt && key.expiresAt <= new Date()) return { label: "expired", variant: "revoked" };
  if (key.expiresAt) return { label: `expires ${key.expiresAt.toLocaleDateString()}`, variant: "pending" };
  return { label: "active", variant: "online" };
}

/** `user:<id>` or `apiKey:<id>`, as the domain stores it. */
function describeCreator(createdBy: string | null, emailByUserId: Map<string, string> | null): string {
  if (!createdBy) return "—";
  const [type, id = ""] = createdBy.split(":");
  if (type === "apiKey") return `API key ${id.slice(0, 8)}`;
  if (!emailByUserId) return `member ${id.slice(0, 8)}`;
  return emailByUserId.get(id) ?? `former member ${id.slice(0, 8)}`;
}

function CreateKeyForm(props: { myRole: Role | null; disabledReason: string | null }) {
  const trpc = useTRPC();
  const ref = useRef<HTMLElement>(null);
  useFocusTarget("new-key", ref);
  const [created, setCreated] = useState<RouterOutputs["apiKey"]["create"] | null>(null);
  const form = useApiForm(keyForm, { name: "", role: "viewer", expiresAt: "" });
  const formFeedback = useFormFeedback(form, { CONFLICT: "name" });
  const create = useMutation(
    trpc.apiKey.create.mutationOptions(
      formFeedback(trpc.apiKey.list.queryFilter(), (key) => {
        form.reset({ name: "", role: form.getValues("role"), expiresAt: "" });
        setCreated(key);
      }),
    ),
  );
  return (
    <Section
      ref={ref}
      id="new-key"
      title="New API key"
      description={
        <>
          Keys act for this organization over the REST API (<code>Authorization: Bearer efk_…</code>), with
          the role they were given, which is at most yours.{" "}
          <a href="/api-docs" className="text-primary underline">
            API reference
          </a>
        </>
      }
    >
      <ApiForm form={form} label="Create an API key" noun="Key" mutation={create}>
        <NameField placeholder="terraform-ci" />
        <SelectField
          name="role"
          label="Role"
          options={roleOptions((r) => (props.myRole ? roleAtLeast(props.myRole, r) : true))}
        />
        <TextField name="expiresAt" label="Expires (optional)" accessibleName="Expires on" type="date" />
        <FormFooter label="Create key" pendingLabel="Creating…" disabledReason={props.disabledReason} />
      </ApiForm>
      {created ? <CopyOnce label="API key" secret={created.key} onDismiss={() => setCreated(null)} /> : null}
    </Section>
  );
}
