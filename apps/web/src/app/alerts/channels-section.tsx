"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { createAlertChannelInput } from "@edgefleet/api/schemas";
import { useMutation, useQuery } from "@tanstack/react-query";
import { SendIcon } from "lucide-react";
import { useMemo, useState } from "react";
import { useActionFeedback } from "~/components/action-feedback";
import { CopyOnce } from "~/components/copy-once";
import { nameColumn, stateColumn } from "~/components/data-table/columns";
import type { DataColumn } from "~/components/data-table/data-table";
import { QueryTable } from "~/components/data-table/query-table";
import { ApiForm } from "~/components/forms/api-form";
import { NameField, SelectField, TextField } from "~/components/forms/fields";
import { useFormFeedback } from "~/components/forms/form-feedback";
import { FormFooter } from "~/components/forms/form-footer";
import { useApiForm } from "~/components/forms/use-api-form";
import { type Role, roleDenial } from "~/components/role-reason";
import { Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { toast } from "~/components/ui/sonner";
import { useTRPC } from "~/trpc/react";
import { switchDeleteColumn } from "./switch-delete-actions";

type Channel = RouterOutputs["alert"]["channels"][number];

const KINDS = { email: "e-mail", webhook: "webhook (signed)" };
const MIN_SEVERITIES = { info: "everything", warning: "warning and critical", critical: "critical only" };

const noChannels = (
  <EmptyState icon={<SendIcon />} title="No channels yet">
    Alerts fire but reach no one until a channel exists.
  </EmptyState>
);

/** Where the organization's alerts go (admins: they leave the platform). A webhook's secret is shown once. */
export function ChannelsSection(props: { role: Role }) {
  const trpc = useTRPC();
  const denied = roleDenial(props.role, "admin");
  const channels = useQuery(trpc.alert.channels.queryOptions());
  const [secret, setSecret] = useState<string | null>(null);
  const form = useApiForm(createAlertChannelInput, {
    kind: "email",
    name: "",
    target: "",
    minSeverity: "warning",
  });
  const formFeedback = useFormFeedback(form);
  const create = useMutation(
    trpc.alert.createChannel.mutationOptions(
      formFeedback(trpc.alert.channels.pathFilter(), (channel) => {
        toast.success(`Channel ${channel.name} created`);
        setSecret(channel.secret ?? null);
        form.reset({ ...form.getValues(), name: "", target: "" });
      }),
    ),
  );
  const feedback = useActionFeedback();
  const update = useMutation(
    trpc.alert.updateChannel.mutationOptions(feedback(trpc.alert.channels.pathFilter())),
  );
  const remove = useMutation(
    trpc.alert.deleteChannel.mutationOptions(feedback(trpc.alert.channels.pathFilter())),
  );
  const columns = useMemo<DataColumn<Channel>[]>(
    () => [
      nameColumn("Channel"),
      { id: "kind", accessorFn: (channel) => channel.kind, meta: { title: "Kind" } },
      {
        id: "target",
        accessorFn: (channel) => channel.target,
        meta: { title: "To", className: "break-all" },
      },
      {
        id: "minSeverity",
        accessorFn: (channel) => MIN_SEVERITIES[channel.minSeverity],
        meta: { title: "Sends" },
      },
      stateColumn((channel) =>
        channel.enabled
          ? { label: "on", variant: "online" }
          : { label: channel.disabledReason ? "switched off after failures" : "off", variant: "offline" },
      ),
      switchDeleteColumn<Channel>({
        thing: (channel) => `channel ${channel.name}`,
        offReason: (channel) => channel.disabledReason,
        deleteConsequence: "Notifications waiting for it are dropped.",
        denied,
        switching: update.isPending,
        onSwitch: update.mutate,
        deleting: remove.isPending,
        onDelete: remove.mutate,
      }),
    ],
    [denied, update.isPending, update.mutate, remove.isPending, remove.mutate],
  );
  return (
    <Section
      title="Channels"
      description="Every alert goes to each channel that wants its severity: e-mail, or a webhook signed per Standard Webhooks."
    >
      {secret ? (
        <CopyOnce label="Webhook signing secret" secret={secret} onDismiss={() => setSecret(null)} />
      ) : null}
      <ApiForm form={form} label="Create a channel" noun="Channel" mutation={create}>
        <SelectField name="kind" label="Kind" options={KINDS} />
        <NameField placeholder="on-call" />
        <TextField
          name="target"
          label="To"
          accessibleName="Channel target"
          placeholder="oncall@example.com or https://…"
        />
        <SelectField
          name="minSeverity"
          label="Sends"
          accessibleName="Channel severity"
          options={MIN_SEVERITIES}
        />
        <FormFooter label="Create channel" pendingLabel="Creating…" disabledReason={denied} />
      </ApiForm>
      <QueryTable
        query={channels}
        label="Channels"
        name="alert-channels"
        columns={columns}
        rowTestId="channel-row"
        empty={noChannels}
      />
    </Section>
  );
}
