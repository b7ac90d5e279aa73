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
      {props.plan.canary ? <CanarySummary canary={props.plan.canary} /> : null}
      <DataTable
        label="Planned batches"
        name="plan-batches"
        columns={columns}
        data={props.plan.batches}
        getRowId={(b) => String(b.index)}
        rowTestId="plan-batch"
        rowData={(b) => ({ nodes: b.nodes })}
      />
    </div>
  );
}

/** How the first batch was sampled: strata covered, sites passed over for their window, left out. */
function CanarySummary(props: { canary: NonNullable<Plan["canary"]> }) {
  const c = props.canary;
  const uncovered = c.uncovered.map((u) => `${siteName(u)} · ${hardwareText(u.hardware)}`);
  return (
    <div className="grid gap-1 text-sm" data-testid="plan-canary">
      <p>
        Batch 1 is a canary stratified across sites and hardware ({c.hardwareLabels.join(", ")}): it covers{" "}
        <strong data-testid="canary-strata">
          {c.strata.covered} of {c.strata.total}
        </strong>{" "}
        site × hardware groups, {c.sites.covered} of {c.sites.total} sites and {c.hardware.covered} of{" "}
        {c.hardware.total} hardware kinds.
        {c.tiers.window_closed + c.tiers.offline > 0
          ? ` ${c.tiers.window_closed} of its nodes wait for their site's window, ${c.tiers.offline} are offline.`
          : ""}
      </p>
      {c.closedSites.length > 0 ? (
        <p className="text-muted-foreground" data-testid="canary-closed-sites">
          Passed over while others can start now (window closed):{" "}
          {c.closedSites.map((s) => siteName(s)).join(", ")}.
        </p>
      ) : null}
      {uncovered.length > 0 ? (
        <p className="text-muted-foreground">
          Not in the canary (batch smaller than the groups): {uncovered.join("; ")}
          {c.strata.total - c.strata.covered > uncovered.length ? " …" : ""}.
        </p>
      ) : null}
    </div>
  );
}

/** `hw=pi4,hardware=,arch=arm64,model=` → `hw=pi4, arch=arm64` (no hardware labels: "unlabelled"). */
function hardwareText(key: string): string {
  const parts = key.split(",").filter((part) => !part.endsWith("="));
  return parts.length > 0 ? parts.join(", ") : "unlabelled";
}
