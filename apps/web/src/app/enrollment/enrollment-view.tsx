"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { createTokenInput } from "@edgefleet/api/schemas";
import { useInfiniteQuery, useMutation, useQuery } from "@tanstack/react-query";
import { CheckIcon, HourglassIcon, TicketIcon } from "lucide-react";
import { useRef, useState } from "react";
import { ActionButton } from "~/components/action-button";
import { useActionFeedback } from "~/components/action-feedback";
import { ConfirmAction } from "~/components/confirm-action";
import { CopyOnce } from "~/components/copy-once";
import {
  actionsColumn,
  labelsColumn,
  linkColumn,
  stateColumn,
  timeColumn,
} from "~/components/data-table/columns";
import type { DataColumn } from "~/components/data-table/data-table";
import { QueryTable } from "~/components/data-table/query-table";
import { ApiForm } from "~/components/forms/api-form";
import { CheckboxField, SelectField, TextField } from "~/components/forms/fields";
import { useFormFeedback } from "~/components/forms/form-feedback";
import { FormFooter } from "~/components/forms/form-footer";
import { siteOptions } from "~/components/forms/select-options";
import { labelAssignmentsText, optionalChoice, optionalNumberText } from "~/components/forms/text-fields";
import { useApiForm } from "~/components/forms/use-api-form";
import { type Role, roleDenial } from "~/components/role-reason";
import { useFocusTarget } from "~/components/shell/focus-target";
import { Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { useTRPC } from "~/trpc/react";
import { InstallCommand } from "./install-command";

type Token = RouterOutputs["enrollment"]["listTokens"]["items"][number];
type PendingNode = RouterOutputs["node"]["list"]["items"][number];

/** Pending nodes and token uses change while an operator watches: poll both. */
const REFRESH_MS = 5_000;
const TOKEN_PAGE = 50;

const EXPIRY_CHOICES = [
  { hours: 1, label: "1 hour" },
  { hours: 24, label: "1 day" },
  { hours: 24 * 7, label: "7 days" },
  { hours: 24 * 30, label: "30 days" },
  { hours: 24 * 365, label: "1 year" },
];

/** The API's createToken input with the text fields a person types (labels, max uses, site) parsed first. */
const tokenForm = createTokenInput.extend({
  labels: labelAssignmentsText(createTokenInput.shape.labels),
  maxUses: optionalNumberText(createTokenInput.shape.maxUses),
  siteId: optionalChoice(createTokenInput.shape.siteId),
});

/**
 * Enrollment: make tokens (shown once, with the install command), see and revoke them, approve
 * or reject nodes waiting for approval. The role shown is the session's; the API decides.
 */
export function EnrollmentView(props: { role: Role; initialSiteId: string }) {
  const denied = roleDenial(props.role, "operator");
  return (
    <>
      <CreateTokenForm disabledReason={denied} initialSiteId={props.initialSiteId} />
      <PendingNodes disabledReason={denied} />
      <TokenList disabledReason={denied} />
    </>
  );
}

function CreateTokenForm(props: { disabledReason: string | null; initialSiteId: string }) {
  const trpc = useTRPC();
  const ref = useRef<HTMLElement>(null);
  useFocusTarget("new-token", ref);
  const sites = useQuery(trpc.site.list.queryOptions());
  const [created, setCreated] = useState<RouterOutputs["enrollment"]["createToken"] | null>(null);
  const form = useApiForm(tokenForm, {
    description: "",
    siteId: props.initialSiteId,
    expiresInHours: 24,
    maxUses: "",
    labels: "",
    requiresApproval: false,
  });
  const formFeedback = useFormFeedback(form, { NOT_FOUND: ["siteId", /^site /] });
  const create = useMutation(
    trpc.enrollment.createToken.mutationOptions(
      formFeedback(trpc.enrollment.listTokens.pathFilter(), (token) => {
        setCreated(token);
        form.reset({ ...form.getValues(), description: "", maxUses: "", labels: "" });
      }),
    ),
  );
  const sitesToChoose = siteOptions(sites.data, "no site");
  // Until the sites have loaded, keep the preselected one choosable so the select shows it.
  if (props.initialSiteId && !sitesToChoose.some((o) => o.value === props.initialSiteId)) {
    sitesToChoose.push({ value: props.initialSiteId, label: "…" });
  }
  return (
    <Section
      ref={ref}
      id="new-token"
      title="New enrollment token"
      description={
        <>
          A node enrolls once with a token: the agent trades it for its own credentials. Tokens expire, can be
          limited to a number of nodes, and can require an operator&apos;s approval for each node.
        </>
      }
    >
      <ApiForm
        form={form}
        label="Create an enrollment token"
        noun="Token"
        pending={create.isPending}
        onSubmit={({ description, ...values }) =>
          create.mutate({ ...values, ...(description ? { description } : {}) })
        }
      >
        <TextField name="description" label="Description" placeholder="plant 7, line 2" maxLength={200} />
        <SelectField name="siteId" label="Site" options={sitesToChoose} />
        <SelectField
          name="expiresInHours"
          label="Expires after"
          parse={Number}
          options={EXPIRY_CHOICES.map((c) => ({ value: String(c.hours), label: c.label }))}
        />
        <TextField
          name="maxUses"
          label="Max nodes"
          accessibleName="Max uses"
          inputMode="numeric"
          placeholder="unlimited"
        />
        <TextField
          name="labels"
          label="Labels for its nodes"
          accessibleName="Token labels"
          placeholder="tier=edge, hw=ipc"
          description="key=value, comma separated"
        />
        <CheckboxField name="requiresApproval" label="Approve each node" />
        <FormFooter label="Create token" pendingLabel="Creating…" disabledReason={props.disabledReason} />
      </ApiForm>
      {created ? (
        <div className="grid gap-4">
          <CopyOnce label="Enrollment token" secret={created.token} onDismiss={() => setCreated(null)} />
          <InstallCommand command={created.installCommand} />
        </div>
      ) : null}
    </Section>
  );
}

const noneWaiting = (
  <EmptyState icon={<HourglassIcon />} title="No node is waiting" testId="pending-empty">
    Nodes enrolled with a token that asks for approval appear here until an operator approves or rejects them.
  </EmptyState>
);

function PendingNodes(props: { disabledReason: string | null }) {
  const trpc = useTRPC();
  const ref = useRef<HTMLElement>(null);
  useFocusTarget("pending-nodes", ref);
  const pending = useQuery(
    trpc.node.list.queryOptions({ status: "pending", limit: 100 }, { refetchInterval: REFRESH_MS }),
  );
  const feedback = useActionFeedback();
  const approve = useMutation(
    trpc.enrollment.approveNode.mutationOptions(
      feedback(
        trpc.node.list.queryFilter(),
        (node) => `${node.name} approved: it receives its credentials on its next try`,
      ),
    ),
  );
  const reject = useMutation(
    trpc.enrollment.revokeNode.mutationOptions(
      feedback(trpc.node.list.queryFilter(), (node) => `${node.name} rejected`),
    ),
  );
  const columns: DataColumn<PendingNode>[] = [
    linkColumn("name", "Node", (node) => ({ text: node.name, href: `/nodes/${node.id}` }), {
      className: "font-mono",
    }),
    { id: "site", accessorFn: (node) => node.site ?? "—", meta: { title: "Site" } },
    labelsColumn((node) => node.labels),
    {
      id: "agent",
      accessorFn: (node) => node.agentVersion ?? "—",
      meta: { title: "Agent", className: "font-mono" },
    },
    actionsColumn((node) => (
      <span className="flex flex-wrap justify-end gap-2 md:justify-start">
        <ActionButton
          variant="default"
          pending={approve.isPending}
          disabledReason={props.disabledReason}
          onClick={() => approve.mutate({ nodeId: node.id })}
        >
          <CheckIcon aria-hidden />
          Approve
        </ActionButton>
        <ConfirmAction
          label="Reject"
          question={`Reject ${node.name}?`}
          consequence="Its key can never enroll again."
          disabledReason={props.disabledReason}
          pending={reject.isPending}
          onConfirm={() => reject.mutate({ nodeId: node.id })}
        />
      </span>
    )),
  ];
  return (
    <Section ref={ref} id="pending-nodes" title="Waiting for approval">
      <QueryTable
        query={pending}
        label="Nodes waiting for approval"
        name="pending-nodes"
        columns={columns}
        rowTestId="pending-node"
        empty={noneWaiting}
      />
    </Section>
  );
}

function tokenState(token: Token): { label: string; variant: "online" | "revoked" | "pending" } {
  if (token.revokedAt) return { label: "revoked", variant: "revoked" };
  if (token.expiresAt <= new Date()) return { label: "expired", variant: "revoked" };
  if (token.maxUses !== null && token.uses >= token.maxUses) return { label: "used up", variant: "pending" };
  return { label: "usable", variant: "online" };
}

const noTokens = (
  <EmptyState icon={<TicketIcon />} title="No tokens yet">
    Create one above, then run the install command it shows on the node.
  </EmptyState>
);

function TokenList(props: { disabledReason: string | null }) {
  const trpc = useTRPC();
  const tokens = useInfiniteQuery(
    trpc.enrollment.listTokens.infiniteQueryOptions(
      { limit: TOKEN_PAGE },
      { getNextPageParam: (page) => page.nextCursor, refetchInterval: REFRESH_MS, retry: false },
    ),
  );
  const feedback = useActionFeedback();
  const revoke = useMutation(
    trpc.enrollment.revokeToken.mutationOptions(
      feedback(trpc.enrollment.listTokens.pathFilter(), () => "Token revoked"),
    ),
  );
  const columns: DataColumn<Token>[] = [
    {
      id: "description",
      accessorFn: (token) => token.description ?? "",
      meta: { title: "Description" },
      cell: ({ row }) => (
        <span>
          {row.original.description || <span className="text-muted-foreground">no description</span>}
          {row.original.requiresApproval ? <span className="text-muted-foreground"> · approval</span> : null}
        </span>
      ),
    },
    { id: "site", accessorFn: (token) => token.site?.name ?? "—", meta: { title: "Site" } },
    {
      id: "uses",
      accessorFn: (token) => token.uses,
      meta: { title: "Nodes", className: "tabular-nums" },
      cell: ({ row }) => (
        <span data-testid="token-uses">
          {row.original.uses} / {row.original.maxUses ?? "∞"}
        </span>
      ),
    },
    timeColumn("expires", "Expires", (token) => token.expiresAt),
    labelsColumn((token) => token.labels),
    stateColumn(tokenState, "token-state"),
    actionsColumn((token) => {
      const state = tokenState(token).label;
      if (state === "revoked" || state === "expired") return null;
      return (
        <ConfirmAction
          label="Revoke"
          question="Revoke this token?"
          consequence="No new node can enroll with it. Nodes already enrolled keep working."
          disabledReason={props.disabledReason}
          pending={revoke.isPending}
          onConfirm={() => revoke.mutate({ id: token.id })}
        />
      );
    }),
  ];
  return (
    <Section title="Tokens">
      <QueryTable
        query={tokens}
        label="Enrollment tokens"
        name="tokens"
        columnChooser
        columns={columns}
        rowTestId="token-row"
        rowData={(token) => ({ id: token.id })}
        empty={noTokens}
      />
    </Section>
  );
}
