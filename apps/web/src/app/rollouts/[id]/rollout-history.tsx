"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { linkColumn, textColumn, timeColumn } from "~/components/data-table/columns";
import { type DataColumn, DataTable } from "~/components/data-table/data-table";
import { Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";

type Detail = RouterOutputs["rollout"]["byId"];
type Failure = Detail["failures"][number];
type Event = Detail["events"][number];

const failureColumns: DataColumn<Failure>[] = [
  linkColumn("node", "Node", (f) => ({ text: f.nodeName, href: `/nodes/${f.nodeId}` }), {
    className: "font-mono",
  }),
  {
    id: "batch",
    accessorFn: (f) => f.batch ?? -1,
    meta: { title: "Batch" },
    cell: ({ row }) =>
      `${row.original.phase === "rollback" ? "rollback " : ""}${(row.original.batch ?? -1) + 1 || "late"}`,
  },
  textColumn("reason", "Why", (f) => f.reason, { none: "no reason reported" }),
];

const eventColumns: DataColumn<Event>[] = [
  timeColumn<Event>("at", "When", (e) => e.at),
  { id: "kind", accessorFn: (e) => e.kind, meta: { title: "What", className: "font-mono" } },
  { id: "message", accessorFn: (e) => e.message, meta: { title: "Details" } },
  {
    id: "actor",
    accessorFn: (e) => (e.actorType === "system" ? "controller" : (e.actorId ?? e.actorType)),
    meta: { title: "Who" },
  },
];

/** Each failed node with its reason, and the rollout's events, newest first. */
export function RolloutHistory(props: { detail: Detail }) {
  return (
    <div className="grid gap-6 lg:grid-cols-2">
      <Section title="Failures">
        <DataTable
          label="Failed nodes"
          name="rollout-failures"
          columns={failureColumns}
          data={props.detail.failures}
          getRowId={(f) => `${f.phase}-${f.nodeId}`}
          rowTestId="rollout-failure"
          empty={<EmptyState title="No node failed" className="py-4" />}
        />
      </Section>
      <Section title="Events">
        <DataTable
          label="Rollout events"
          columns={eventColumns}
          data={props.detail.events}
          rowTestId="rollout-event"
          rowData={(e) => ({ kind: e.kind })}
          empty={<EmptyState title="No events yet" className="py-4" />}
        />
      </Section>
    </div>
  );
}
