"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useQuery } from "@tanstack/react-query";
import { RocketIcon } from "lucide-react";
import { linkColumn, stateColumn, timeColumn } from "~/components/data-table/columns";
import type { DataColumn } from "~/components/data-table/data-table";
import { QueryTable } from "~/components/data-table/query-table";
import { Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { useTRPC } from "~/trpc/react";
import { rolloutStatus } from "./status";

type RolloutRow = RouterOutputs["rollout"]["list"]["items"][number];

const columns: DataColumn<RolloutRow>[] = [
  linkColumn(
    "rollout",
    "Rollout",
    (r) => ({ text: `${r.appName} → ${r.version}`, href: `/rollouts/${r.id}` }),
    {
      className: "font-mono",
    },
  ),
  stateColumn<RolloutRow>((r) => rolloutStatus(r.status), "rollout-status", "Status"),
  {
    id: "target",
    accessorFn: (r) => r.target.selector,
    meta: { title: "Target", className: "font-mono" },
    cell: ({ row }) => {
      const { selector, siteIds } = row.original.target;
      const sites = siteIds.length > 0 ? `${siteIds.length} site${siteIds.length === 1 ? "" : "s"}` : null;
      return [selector || "every node", sites].filter(Boolean).join(" · ");
    },
  },
  timeColumn<RolloutRow>("created", "Created", (r) => r.createdAt),
  timeColumn<RolloutRow>("finished", "Finished", (r) => r.finishedAt),
];

const noRollouts = (
  <EmptyState icon={<RocketIcon />} title="No rollouts yet">
    A rollout moves a version onto the nodes a label selector or sites pick, batch by batch, with pauses and
    approvals. Start one from a version&apos;s &ldquo;Roll out&rdquo; button on its app&apos;s page.
  </EmptyState>
);

/** Rollouts, newest first: all of the organization's, or one app's (its page). Polled: statuses move. */
export function RolloutsTable(props: { appId?: string; className?: string }) {
  const trpc = useTRPC();
  const rollouts = useQuery(
    trpc.rollout.list.queryOptions(
      { limit: 100, ...(props.appId ? { appId: props.appId } : {}) },
      { refetchInterval: 5_000 },
    ),
  );
  return (
    <Section title="Rollouts" className={props.className}>
      <QueryTable
        query={rollouts}
        label="Rollouts"
        columns={columns}
        rowTestId="rollout-row"
        rowData={(r) => ({ status: r.status })}
        empty={noRollouts}
      />
    </Section>
  );
}
