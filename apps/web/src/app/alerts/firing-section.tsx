"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useMutation, useQuery } from "@tanstack/react-query";
import { BellOffIcon } from "lucide-react";
import Link from "next/link";
import { useMemo } from "react";
import { ActionButton } from "~/components/action-button";
import { useActionFeedback } from "~/components/action-feedback";
import { actionsColumn, nameColumn, stateColumn, timeColumn } from "~/components/data-table/columns";
import type { DataColumn } from "~/components/data-table/data-table";
import { QueryTable } from "~/components/data-table/query-table";
import { type Role, roleDenial } from "~/components/role-reason";
import { Badge } from "~/components/ui/badge";
import { Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { useTRPC } from "~/trpc/react";
import { ALERTS_POLLING, firingStateVariant, severityVariant } from "./shared";

type Firing = RouterOutputs["alert"]["firing"][number];

const columns = (silence: (alert: Firing) => React.ReactNode): DataColumn<Firing>[] => [
  {
    id: "severity",
    accessorFn: (alert) => alert.severity,
    meta: { title: "Severity" },
    cell: ({ row }) => (
      <Badge variant={severityVariant(row.original.severity)}>{row.original.severity}</Badge>
    ),
  },
  stateColumn((alert) => ({ label: alert.state, variant: firingStateVariant(alert.state) }), "firing-state"),
  nameColumn("Policy"),
  { id: "summary", accessorFn: (alert) => alert.summary, meta: { title: "Summary" } },
  {
    id: "where",
    accessorFn: (alert) => alert.nodeName ?? alert.siteName ?? alert.rolloutId ?? "",
    meta: { title: "Where" },
    cell: ({ row }) => {
      const alert = row.original;
      if (alert.nodeId)
        return (
          <Link href={`/nodes/${alert.nodeId}`} className="text-primary hover:underline">
            {alert.nodeName ?? alert.nodeId}
          </Link>
        );
      if (alert.siteId)
        return (
          <Link href={`/sites/${alert.siteId}`} className="text-primary hover:underline">
            {alert.siteName ?? alert.siteId}
          </Link>
        );
      if (alert.rolloutId)
        return (
          <Link href={`/rollouts/${alert.rolloutId}`} className="text-primary hover:underline">
            rollout
          </Link>
        );
      return <span className="text-muted-foreground">—</span>;
    },
  },
  timeColumn("since", "Since", (alert) => alert.startsAt),
  actionsColumn(silence),
];

const nothingFiring = (
  <EmptyState icon={<BellOffIcon />} title="Nothing is firing">
    Alerts appear here while a policy&apos;s condition holds.
  </EmptyState>
);

/** Alerts firing now, from the organization's Alertmanager; one click silences a node or site for an hour. */
export function FiringSection(props: { role: Role }) {
  const trpc = useTRPC();
  const firing = useQuery(trpc.alert.firing.queryOptions(undefined, ALERTS_POLLING));
  const denied = roleDenial(props.role, "operator");
  const feedback = useActionFeedback();
  const silence = useMutation(
    trpc.alert.createSilence.mutationOptions(
      feedback(
        [trpc.alert.silences.pathFilter(), trpc.alert.firing.pathFilter()],
        (created) => `${created.targetName} silenced for an hour`,
      ),
    ),
  );
  const table = useMemo(
    () =>
      columns((alert: Firing) => {
        const target = alert.nodeId
          ? { nodeId: alert.nodeId, what: alert.nodeName ?? "node" }
          : alert.siteId
            ? { siteId: alert.siteId, what: alert.siteName ?? "site" }
            : null;
        if (!target || alert.state === "silenced") return null;
        const { what, ...scope } = target;
        return (
          <ActionButton
            pending={silence.isPending}
            disabledReason={denied}
            onClick={() =>
              silence.mutate({ ...scope, durationMinutes: 60, comment: `from the alert ${alert.name}` })
            }
          >
            Silence {what} 1 h
          </ActionButton>
        );
      }),
    [denied, silence.isPending, silence.mutate],
  );
  return (
    <Section
      title="Firing now"
      description="Silenced, inhibited (their site is down) and muted (quiet hours) alerts are listed too; they are not sent."
    >
      <QueryTable
        query={firing}
        label="Firing alerts"
        columns={table}
        getRowId={(alert) => alert.fingerprint}
        rowTestId="firing-row"
        rowData={(alert) => ({ state: alert.state })}
        empty={nothingFiring}
      />
    </Section>
  );
}
