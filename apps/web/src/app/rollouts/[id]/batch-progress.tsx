"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { formatBytes } from "~/app/fleet/top-bandwidth";
import { stateColumn, textColumn } from "~/components/data-table/columns";
import { type DataColumn, DataTable } from "~/components/data-table/data-table";

type Detail = RouterOutputs["rollout"]["byId"];
export type BatchProgress = Detail["batches"][number];

const n = (counts: Record<string, number>, ...keys: string[]) =>
  keys.reduce((sum, key) => sum + (counts[key] ?? 0), 0);

/**
 * Where a batch's nodes stand, in the words of the live page: waiting for their turn, pulling
 * the artifact (with bytes), starting, running the version (or, rolling back, back on the old
 * one), failed, skipped because offline (updated when they return), caught up after the batch.
 */
export function nodeStates(batch: BatchProgress) {
  const { byOutcome, byInstanceState } = batch;
  return {
    pending: n(byOutcome, "not_started", "ready", "waiting_offline"),
    pulling: byInstanceState.pulling ?? 0,
    starting: byInstanceState.starting ?? 0,
    running: n(byOutcome, "succeeded", "already_current"),
    failed: n(byOutcome, "failed", "timed_out", "failed_offline"),
    skippedOffline: n(byOutcome, "skipped_offline"),
    caughtUp: batch.caughtUp,
  };
}

const statusVariant = (status: string) =>
  status === "succeeded"
    ? ("online" as const)
    : status === "failed"
      ? ("destructive" as const)
      : status === "running"
        ? ("default" as const)
        : ("secondary" as const);

function count(
  id: keyof ReturnType<typeof nodeStates>,
  title: string,
  className = "",
): DataColumn<BatchProgress> {
  return {
    id,
    accessorFn: (b) => nodeStates(b)[id],
    meta: { title, className: `tabular-nums ${className}` },
    cell: ({ getValue }) => <span data-testid={`batch-${id}`}>{getValue()}</span>,
  };
}

const columns: DataColumn<BatchProgress>[] = [
  {
    id: "batch",
    accessorFn: (b) => b.index,
    meta: { title: "Batch" },
    cell: ({ row }) =>
      row.original.index < 0
        ? "late joiners"
        : `${row.original.phase === "rollback" ? "rollback " : ""}${row.original.index + 1}`,
  },
  stateColumn<BatchProgress>(
    (b) => ({ label: b.status, variant: statusVariant(b.status) }),
    "batch-status",
    "Status",
  ),
  { id: "nodes", accessorFn: (b) => b.liveTally.nodes, meta: { title: "Nodes", className: "tabular-nums" } },
  count("pending", "Waiting"),
  {
    ...count("pulling", "Pulling"),
    cell: ({ row }) => {
      const { pulling } = row.original;
      return (
        <span data-testid="batch-pulling">
          {pulling.nodes}
          {pulling.nodes > 0 && pulling.totalBytes > 0 ? (
            <span className="text-xs text-muted-foreground">
              {" "}
              ({formatBytes(pulling.bytes)} / {formatBytes(pulling.totalBytes)})
            </span>
          ) : null}
        </span>
      );
    },
  },
  count("starting", "Starting"),
  count("running", "Running", "text-online"),
  count("failed", "Failed", "text-destructive"),
  count("skippedOffline", "Offline, skipped", "text-offline"),
  count("caughtUp", "Caught up"),
  textColumn("reason", "Why", (b) => b.reason),
];

/** The batches of one phase (forward, rollback) with their nodes by state. */
export function BatchProgressTable(props: { label: string; batches: BatchProgress[]; name: string }) {
  return (
    <DataTable
      label={props.label}
      name={props.name}
      columns={columns}
      data={props.batches}
      getRowId={(b) => `${b.phase}-${b.index}`}
      rowTestId="batch-row"
      rowData={(b) => ({
        phase: b.phase,
        index: b.index,
        status: b.status,
        running: nodeStates(b).running,
        nodes: b.liveTally.nodes,
      })}
    />
  );
}
