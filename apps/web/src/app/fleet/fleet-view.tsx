"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { RocketIcon } from "lucide-react";
import Link from "next/link";
import { useCallback, useState } from "react";
import { type DataColumn, DataTable } from "~/components/data-table/data-table";
import { ErrorNotice } from "~/components/error-notice";
import { QueryContent } from "~/components/query-content";
import { Segmented } from "~/components/segmented";
import { StatusEvents } from "~/components/status-events";
import { Button } from "~/components/ui/button";
import { Card, CardHeader, CardTitle, Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { Skeleton } from "~/components/ui/skeleton";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "~/components/ui/tabs";
import { LiveIndicator } from "~/trpc/live-indicator";
import { useTRPC } from "~/trpc/react";
import { useFleetLive } from "~/trpc/use-fleet-live";
import { StatusBar } from "./status-bar";
import { StatusCounts } from "./status-counts";
import { BANDWIDTH_WINDOWS, type BandwidthWindow, TopBandwidth } from "./top-bandwidth";

/**
 * Live without polling: status changes arrive as a server-sent signal (useFleetLive) and refetch
 * the aggregates. What no status change announces (an app failing, bytes moving) is refreshed on
 * a slow timer.
 */
const SLOW_REFRESH_MS = 60_000;

type SiteRow = RouterOutputs["site"]["list"][number];
type VersionRow = RouterOutputs["node"]["breakdown"]["byAgentVersion"][number];

const siteColumns: DataColumn<SiteRow>[] = [
  {
    id: "site",
    accessorFn: (site) => site.name ?? "",
    meta: { title: "Site", className: "md:w-1/2" },
    cell: ({ row }) => (
      <span className="grid w-full gap-1">
        {row.original.name ? (
          <Link
            href={`/nodes?selector=${encodeURIComponent(`site=${row.original.name}`)}`}
            className="text-primary hover:underline"
          >
            {row.original.name}
          </Link>
        ) : (
          <span className="text-muted-foreground">no site</span>
        )}
        <StatusBar
          byStatus={row.original.byStatus}
          label={`Status shares in ${row.original.name ?? "no site"}`}
        />
      </span>
    ),
  },
  { id: "total", accessorFn: (s) => s.total, meta: { title: "Nodes", className: "tabular-nums" } },
  {
    id: "online",
    accessorFn: (s) => s.byStatus.online ?? 0,
    meta: { title: "Online", className: "tabular-nums" },
  },
  {
    id: "offline",
    accessorFn: (s) => s.byStatus.offline ?? 0,
    meta: { title: "Offline", className: "tabular-nums" },
  },
];

const versionColumns: DataColumn<VersionRow>[] = [
  {
    id: "version",
    accessorFn: (row) => row.agentVersion ?? "never connected",
    meta: { title: "Agent version", className: "font-mono" },
  },
  { id: "total", accessorFn: (row) => row.total, meta: { title: "Nodes", className: "tabular-nums" } },
];

export function FleetView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [bandwidthWindow, setBandwidthWindow] = useState<BandwidthWindow>("24h");
  const slow = { refetchInterval: SLOW_REFRESH_MS };
  const counts = useQuery(trpc.node.counts.queryOptions(undefined, slow));
  const sites = useQuery(trpc.site.list.queryOptions(undefined, slow));
  const breakdown = useQuery(trpc.node.breakdown.queryOptions(undefined, slow));
  const events = useQuery(trpc.fleet.events.queryOptions({ limit: 15 }, slow));
  const bandwidth = useQuery(
    trpc.metrics.topBandwidth.queryOptions(
      { window: bandwidthWindow, limit: 10 },
      { ...slow, placeholderData: (previous) => previous, retry: false },
    ),
  );
  const live = useFleetLive(
    useCallback(
      () =>
        Promise.all([
          queryClient.invalidateQueries(trpc.node.counts.queryFilter()),
          queryClient.invalidateQueries(trpc.node.breakdown.queryFilter()),
          queryClient.invalidateQueries(trpc.site.list.queryFilter()),
          queryClient.invalidateQueries(trpc.fleet.events.queryFilter()),
        ]),
      [queryClient, trpc],
    ),
  );
  // The events and the bandwidth say their own errors where they would be.
  const error = counts.error ?? sites.error ?? breakdown.error;

  return (
    <>
      {error ? <ErrorNotice error={error} /> : null}
      <Card aria-label="Fleet summary">
        <div className="flex flex-wrap items-start justify-between gap-4">
          {counts.data ? (
            <StatusCounts counts={counts.data} />
          ) : (
            <Skeleton className="h-12 w-80" aria-label="Loading counts" />
          )}
          <LiveIndicator state={live} />
        </div>
        {counts.data ? (
          <StatusBar byStatus={counts.data.byStatus} label="Share of nodes per status" className="h-3" />
        ) : null}
      </Card>
      {counts.data?.total === 0 ? <FirstRun /> : null}
      <div className="grid gap-6 lg:grid-cols-2">
        <Section title="Recent events">
          <QueryContent query={events} loading="Loading events" skeletonClassName="h-48">
            {(data) => (
              <StatusEvents
                events={data.items}
                scope="fleet"
                testId="recent-events"
                itemTestId="recent-event"
              />
            )}
          </QueryContent>
        </Section>
        <Card aria-label="Top bandwidth consumers">
          <CardHeader>
            <CardTitle>Top bandwidth</CardTitle>
            <Segmented
              label="Bandwidth window"
              options={BANDWIDTH_WINDOWS.map((w) => ({ value: w, label: w }))}
              value={bandwidthWindow}
              onChange={setBandwidthWindow}
            />
          </CardHeader>
          <QueryContent query={bandwidth} loading="Loading bandwidth" skeletonClassName="h-48">
            {(data) => <TopBandwidth data={data} />}
          </QueryContent>
        </Card>
        <Card aria-label="Fleet breakdown" className="lg:col-span-2">
          <Tabs defaultValue="sites">
            <div className="flex flex-wrap items-center gap-2">
              <CardTitle>Breakdown</CardTitle>
              <TabsList>
                <TabsTrigger value="sites">By site</TabsTrigger>
                <TabsTrigger value="versions">By agent version</TabsTrigger>
              </TabsList>
            </div>
            <TabsContent value="sites">
              <DataTable
                label="Nodes by site"
                name="sites-table"
                columns={siteColumns}
                data={sites.data ?? []}
                getRowId={(site) => site.id ?? "none"}
              />
            </TabsContent>
            <TabsContent value="versions">
              <DataTable
                label="Nodes by agent version"
                name="versions-table"
                columns={versionColumns}
                data={breakdown.data?.byAgentVersion ?? []}
                getRowId={(row) => row.agentVersion ?? "none"}
              />
            </TabsContent>
          </Tabs>
        </Card>
      </div>
    </>
  );
}

/** An organization without nodes: what to do first, in three steps. */
function FirstRun() {
  return (
    <EmptyState
      testId="first-run"
      icon={<RocketIcon />}
      title="Enroll your first node"
      action={
        <Button asChild>
          <Link href="/enrollment#new-token">Create an enrollment token</Link>
        </Button>
      }
    >
      <ol className="list-decimal space-y-1 pl-5 text-left">
        <li>Create an enrollment token (optionally for a site, with labels for its nodes).</li>
        <li>Run the install command it shows on the node: the agent enrolls and connects.</li>
        <li>Approve it if the token asks for approval; it then shows up here, live.</li>
      </ol>
    </EmptyState>
  );
}
