"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { BoxIcon } from "lucide-react";
import { type ReactNode, useCallback, useMemo } from "react";
import { type DataColumn, DataTable } from "~/components/data-table/data-table";
import { NodeCredentialsControl } from "~/components/node-credentials-control";
import { QueryContent } from "~/components/query-content";
import { RelativeTime } from "~/components/relative-time";
import { StatusBadge } from "~/components/status-badge";
import { Badge } from "~/components/ui/badge";
import { Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { LiveIndicator } from "~/trpc/live-indicator";
import { useTRPC } from "~/trpc/react";
import { type LiveState, useFleetLive } from "~/trpc/use-fleet-live";
import { LabelsEditor } from "./labels-editor";
import { LogViewer } from "./log-viewer";
import { NodeCharts } from "./node-charts";
import { AppOperations, NodeOperations } from "./node-operations";
import { NodeProbes } from "./node-probes";
import { StatusHistory } from "./status-history";

type Node = RouterOutputs["node"]["byId"];
type AppRow = Node["apps"][number];

function When(props: { date: Date | null }) {
  if (!props.date) return <>—</>;
  return (
    <>
      {props.date.toLocaleString()} (<RelativeTime date={props.date} />)
    </>
  );
}

function Identity({ node }: { node: Node }) {
  const rows: Array<[string, ReactNode]> = [
    ["Status", <StatusBadge key="s" status={node.status} />],
    [
      "Degraded",
      node.degradedReasons.length > 0 ? (
        <Badge key="d" variant="degraded" data-testid="degraded-reasons" className="whitespace-normal">
          {node.degradedReasons.join("; ")}
        </Badge>
      ) : (
        "no"
      ),
    ],
    ["Site", node.site?.name ?? "—"],
    ["Agent version", node.agentVersion ?? "—"],
    ["Enrolled", <When key="e" date={node.enrolledAt} />],
    ["Last seen", <When key="l" date={node.lastSeenAt} />],
    ["Revoked", <When key="r" date={node.revokedAt} />],
    ["Desired / applied revision", `${node.desiredRevision} / ${node.appliedRevision}`],
    ["Id", <code key="id">{node.id}</code>],
    ["Public key", node.publicKey ? <code key="pk">{node.publicKey}</code> : "—"],
  ];
  return (
    <dl className="grid gap-x-6 gap-y-2 text-sm sm:grid-cols-[max-content_minmax(0,1fr)]">
      {rows.map(([term, value]) => (
        <div key={term} className="contents">
          <dt className="text-muted-foreground">{term}</dt>
          <dd className="min-w-0 break-all">{value}</dd>
        </div>
      ))}
    </dl>
  );
}

const appColumns: DataColumn<AppRow>[] = [
  { id: "app", accessorKey: "app", meta: { title: "App", className: "font-medium" } },
  { id: "desired", accessorKey: "desiredVersion", meta: { title: "Desired", className: "font-mono" } },
  {
    id: "running",
    accessorFn: (app) => app.observedVersion ?? "—",
    meta: { title: "Running", className: "font-mono" },
  },
  {
    id: "state",
    accessorKey: "state",
    meta: { title: "State" },
    cell: ({ row }) => (
      <Badge
        variant={
          row.original.state === "running"
            ? "online"
            : row.original.state === "failed"
              ? "offline"
              : "pending"
        }
        title={row.original.reason ?? undefined}
      >
        {row.original.state}
      </Badge>
    ),
  },
  { id: "restarts", accessorKey: "restarts", meta: { title: "Restarts", className: "tabular-nums" } },
];

/** The apps table with an operations column (restart, stop/start, health check) for this node. */
function useAppColumns(node: Node): DataColumn<AppRow>[] {
  const { id, name, status } = node;
  return useMemo(
    () => [
      ...appColumns,
      {
        id: "operations",
        enableSorting: false,
        meta: { title: "Operations" },
        cell: ({ row }) => (
          <AppOperations
            nodeId={id}
            nodeName={name}
            app={row.original.app}
            state={row.original.state}
            status={status}
          />
        ),
      },
    ],
    [id, name, status],
  );
}

function AppsTable({ node }: { node: Node }) {
  const columns = useAppColumns(node);
  return (
    <DataTable
      label="Apps on this node"
      name="apps-table"
      columns={columns}
      data={node.apps}
      empty={
        <EmptyState icon={<BoxIcon />} title="No apps on this node.">
          Apps arrive with a rollout that selects this node by its labels.
        </EmptyState>
      }
    />
  );
}

export function NodeDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // Status changes are pushed (useFleetLive); app states are not, so they are re-read on a timer.
  const node = useQuery(trpc.node.byId.queryOptions({ id }, { refetchInterval: 30_000, retry: false }));
  const live = useFleetLive(
    useCallback(
      () =>
        Promise.all([
          queryClient.invalidateQueries(trpc.node.byId.queryFilter({ id })),
          queryClient.invalidateQueries(trpc.node.statusHistory.pathFilter()),
          queryClient.invalidateQueries(trpc.node.availability.pathFilter()),
        ]),
      [queryClient, trpc, id],
    ),
  );
  return (
    <QueryContent query={node} loading="Loading the node" skeletonClassName="h-64">
      {(data) => <NodeCards node={data} live={live} />}
    </QueryContent>
  );
}

function NodeCards({ node, live }: { node: Node; live: LiveState }) {
  return (
    <div className="grid gap-6 lg:grid-cols-3">
      <div className="flex flex-wrap items-center gap-3 lg:col-span-3">
        <h2 className="font-mono text-xl font-semibold break-all" data-testid="node-title">
          {node.name}
        </h2>
        <LiveIndicator state={live} />
      </div>
      <Section className="lg:col-span-2" title="Identity">
        <Identity node={node} />
      </Section>
      <div className="grid content-start gap-6">
        <Section title="Labels">
          <LabelsEditor nodeId={node.id} labels={node.labels} />
        </Section>
        <Section title="Credentials">
          <NodeCredentialsControl nodeId={node.id} name={node.name} status={node.status} />
        </Section>
        <Section title="Operations">
          <NodeOperations nodeId={node.id} status={node.status} />
        </Section>
      </div>
      <Section className="lg:col-span-3" title="Status history">
        <StatusHistory nodeId={node.id} />
      </Section>
      <Section className="lg:col-span-3" title="Apps">
        <AppsTable node={node} />
      </Section>
      <Section className="lg:col-span-3" title="Live logs">
        <LogViewer nodeId={node.id} apps={node.apps.map((app) => app.app)} status={node.status} />
      </Section>
      <Section className="lg:col-span-3" title="Metrics">
        <NodeCharts nodeId={node.id} />
      </Section>
      <Section className="lg:col-span-3" title="Network probes">
        <NodeProbes nodeId={node.id} status={node.status} />
      </Section>
    </div>
  );
}
