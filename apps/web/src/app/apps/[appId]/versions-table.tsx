"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useQuery } from "@tanstack/react-query";
import { PackageIcon } from "lucide-react";
import Link from "next/link";
import { useMemo } from "react";
import { formatBytes } from "~/app/fleet/top-bandwidth";
import { actionsColumn, stateColumn } from "~/components/data-table/columns";
import type { DataColumn } from "~/components/data-table/data-table";
import { QueryTable } from "~/components/data-table/query-table";
import { type Role, roleDenial } from "~/components/role-reason";
import { Badge } from "~/components/ui/badge";
import { Button } from "~/components/ui/button";
import { Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { useTRPC } from "~/trpc/react";
import { InstanceCounts } from "../instance-counts";

type Version = RouterOutputs["appVersion"]["list"]["items"][number];
type Deployment = RouterOutputs["app"]["deployment"]["versions"][number];
type Row = Version & { deployment: Deployment | undefined };

/** While an artifact is importing the page polls fast, so its state moves on screen. */
const FAST_MS = 2_000;
const SLOW_MS = 10_000;

/** What a person reads for an artifact's state: an upload not received yet is not "importing". */
function artifactState(version: Version) {
  const { state, source } = version.artifact;
  if (state === "ready") return { label: "ready", variant: "online" as const };
  if (state === "failed") return { label: "failed", variant: "destructive" as const };
  return { label: source === "url" ? "importing" : "waiting for upload", variant: "pending" as const };
}

const baseColumns: DataColumn<Row>[] = [
  {
    id: "version",
    accessorFn: (v) => v.version,
    meta: { title: "Version", className: "font-mono" },
  },
  {
    ...stateColumn<Row>(artifactState, undefined, "Artifact"),
    cell: ({ row }) => {
      const { label, variant } = artifactState(row.original);
      return (
        <span className="grid justify-items-end gap-1 md:justify-items-start">
          <Badge variant={variant} data-testid="artifact-state" data-state={row.original.artifact.state}>
            {label}
          </Badge>
          {row.original.artifact.error ? (
            <span className="text-xs text-destructive" data-testid="artifact-error">
              {row.original.artifact.error}
            </span>
          ) : null}
        </span>
      );
    },
  },
  {
    id: "size",
    accessorFn: (v) => v.artifact.size ?? -1,
    meta: { title: "Size", className: "tabular-nums" },
    cell: ({ row }) => (row.original.artifact.size === null ? "—" : formatBytes(row.original.artifact.size)),
  },
  {
    id: "sha256",
    accessorFn: (v) => v.artifact.sha256 ?? "",
    meta: { title: "SHA-256", className: "font-mono" },
    cell: ({ row }) =>
      row.original.artifact.sha256 ? (
        <span title={row.original.artifact.sha256}>{row.original.artifact.sha256.slice(0, 12)}</span>
      ) : (
        "—"
      ),
  },
  {
    id: "desired",
    accessorFn: (v) => v.deployment?.desired.total ?? 0,
    meta: { title: "Told to run it", className: "tabular-nums" },
    cell: ({ row }) => (
      <InstanceCounts
        total={row.original.deployment?.desired.total ?? 0}
        byState={row.original.deployment?.desired.byState ?? {}}
        testId="version-desired"
      />
    ),
  },
  {
    id: "running",
    accessorFn: (v) => v.deployment?.observed.byState.running ?? 0,
    meta: { title: "Running it", className: "tabular-nums" },
    cell: ({ row }) => (
      <span data-testid="version-running">{row.original.deployment?.observed.byState.running ?? 0}</span>
    ),
  },
];

const noVersions = (
  <EmptyState icon={<PackageIcon />} title="No versions yet">
    A version is a run command and an artifact (a tarball or a single binary, uploaded here or imported from
    an https URL). Add the first one below.
  </EmptyState>
);

export function VersionsTable(props: { appId: string; role: Role; className?: string }) {
  const trpc = useTRPC();
  const versions = useQuery(
    trpc.appVersion.list.queryOptions(
      { appId: props.appId, limit: 200 },
      {
        refetchInterval: (query) =>
          query.state.data?.items.some((v) => v.artifact.state === "pending") ? FAST_MS : SLOW_MS,
      },
    ),
  );
  const deployment = useQuery(
    trpc.app.deployment.queryOptions({ id: props.appId }, { refetchInterval: 5_000 }),
  );
  const denied = roleDenial(props.role, "operator");
  const rows = useMemo(() => {
    const byId = new Map(deployment.data?.versions.map((d) => [d.id, d]));
    return (versions.data?.items ?? []).map((v) => ({ ...v, deployment: byId.get(v.id) }));
  }, [versions.data, deployment.data]);
  const columns = useMemo(
    () => [
      ...baseColumns,
      actionsColumn<Row>((v) => {
        const why =
          denied ?? (v.artifact.state === "ready" ? null : `its artifact is ${artifactState(v).label}`);
        return why ? (
          <Button size="sm" variant="outline" disabledReason={why}>
            Roll out
          </Button>
        ) : (
          <Button size="sm" variant="outline" asChild>
            <Link href={`/rollouts/new?appId=${props.appId}&versionId=${v.id}`}>Roll out</Link>
          </Button>
        );
      }),
    ],
    [denied, props.appId],
  );
  return (
    <Section title="Versions" className={props.className} description="Immutable once created; newest first.">
      <QueryTable
        query={versions}
        rows={rows}
        label="Versions"
        columns={columns}
        rowTestId="version-row"
        rowData={(v) => ({ version: v.version })}
        empty={noVersions}
      />
    </Section>
  );
}
