"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { TriangleAlertIcon } from "lucide-react";
import { type DataColumn, DataTable } from "~/components/data-table/data-table";
import { Alert } from "~/components/ui/alert";

type Plan = RouterOutputs["rollout"]["preview"];
type PlannedBatch = Plan["batches"][number];

/** "approval", "5 min", "none": a batch's pause as stored by the strategy schema. */
export function pauseText(pause: unknown): string {
  if (pause === "approval") return "approval";
  if (pause && typeof pause === "object" && "seconds" in pause)
    return `${(pause as { seconds: number }).seconds} s pause`;
  return "none";
}

const siteName = (s: { siteName: string | null; siteId: string | null }) =>
  s.siteName ?? (s.siteId ? "unknown site" : "no site");

const columns: DataColumn<PlannedBatch>[] = [
  { id: "batch", accessorFn: (b) => b.index + 1, meta: { title: "Batch", className: "tabular-nums" } },
  { id: "source", accessorFn: (b) => b.source, meta: { title: "From" } },
  { id: "nodes", accessorFn: (b) => b.nodes, meta: { title: "Nodes", className: "tabular-nums" } },
  {
    id: "sites",
    enableSorting: false,
    meta: { title: "Per site" },
    cell: ({ row }) => (
      <span className="inline-flex flex-wrap justify-end gap-x-3 md:justify-start">
        {row.original.sites.map((s) => (
          <span key={s.siteId ?? "none"} data-testid="plan-site" data-site={siteName(s)}>
            {siteName(s)}: {s.nodes}
            {s.offline > 0 ? <span className="text-offline"> ({s.offline} offline)</span> : null}
          </span>
        ))}
      </span>
    ),
  },
  {
    id: "threshold",
    accessorFn: (b) => b.successThreshold,
    meta: { title: "Must succeed", className: "tabular-nums" },
    cell: ({ getValue }) => `${getValue()}%`,
  },
  { id: "offline", accessorFn: (b) => b.offline, meta: { title: "Offline nodes" } },
  { id: "pause", accessorFn: (b) => pauseText(b.pauseAfter), meta: { title: "Then" } },
];

/** A rollout's plan: totals, warnings, batch by batch with node counts per site. */
export function PlanView(props: { plan: Plan }) {
  const { totals, warnings } = props.plan;
  return (
    <div className="grid gap-3" data-testid="rollout-plan">
      <p className="text-sm" data-testid="plan-totals">
        <strong className="tabular-nums">{totals.target}</strong> nodes targeted:{" "}
        <strong className="tabular-nums" data-testid="plan-to-update">
          {totals.toUpdate}
        </strong>{" "}
        to update, {totals.alreadyCurrent} already on this version, {totals.offline} offline now.
      </p>
      {warnings.map((w) => (
        <Alert key={`${w.code}-${w.message}`} variant="warning" data-testid="plan-warning">
          <TriangleAlertIcon aria-hidden />
          {w.message}
        </Alert>
      ))}
      <DataTable
        label="Planned batches"
        testId="plan-batches"
        columns={columns}
        data={props.plan.batches}
        getRowId={(b) => String(b.index)}
        rowAttributes={(b) => ({ "data-testid": "plan-batch", "data-nodes": String(b.nodes) })}
      />
    </div>
  );
}
