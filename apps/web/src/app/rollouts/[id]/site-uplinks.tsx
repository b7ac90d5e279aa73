"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useQuery } from "@tanstack/react-query";
import { ChartLineIcon } from "lucide-react";
import { useEffect, useMemo, useRef, useState } from "react";
import { formatBytes } from "~/app/fleet/top-bandwidth";
import { linkColumn } from "~/components/data-table/columns";
import { type DataColumn, DataTable } from "~/components/data-table/data-table";
import { ErrorNotice } from "~/components/error-notice";
import { Badge } from "~/components/ui/badge";
import { Button } from "~/components/ui/button";
import { Section } from "~/components/ui/card";
import { useTRPC } from "~/trpc/react";
import { TimeChart } from "../../nodes/[id]/time-chart";

type Uplinks = RouterOutputs["rollout"]["siteUplinks"];
type SiteUplink = Uplinks["sites"][number];

const LIVE_MS = 2_000;
/** The chart's unit (decimal, as the budget is typed on the new-rollout form). */
const MB = 1_000_000;
/** A peak this far over the byte budget is shown as over it (one interval may carry one chunk more). */
const OVER_BUDGET = 1.1;

const rate = (bytesPerSecond: number | null | undefined) =>
  bytesPerSecond === null || bytesPerSecond === undefined ? "—" : `${formatBytes(bytesPerSecond)}/s`;

const CACHE: Record<string, { label: string; variant: "online" | "secondary" | "degraded" | "destructive" }> =
  {
    seeded: { label: "seeded", variant: "online" },
    present: { label: "cached", variant: "online" },
    seeding: { label: "seeding", variant: "secondary" },
    no_cache: { label: "fallback: hub", variant: "degraded" },
    full: { label: "fallback: cache full", variant: "degraded" },
    failed: { label: "fallback: seeding failed", variant: "destructive" },
  };

function budgetText(budget: SiteUplink["budget"]): string {
  const parts = [
    ...(budget.bytesPerSecond !== null ? [rate(budget.bytesPerSecond)] : []),
    ...(budget.concurrentDownloads !== null
      ? [`${budget.concurrentDownloads} download${budget.concurrentDownloads === 1 ? "" : "s"} at once`]
      : []),
  ];
  return parts.length > 0 ? parts.join(" · ") : "none";
}

function columns(onChart: (siteId: string) => void, charted: string | null): DataColumn<SiteUplink>[] {
  return [
    linkColumn("site", "Site", (s) => ({ text: s.siteName, href: `/sites/${s.siteId}` })),
    {
      id: "budget",
      accessorFn: (s) => s.budget.bytesPerSecond ?? 0,
      meta: { title: "Budget" },
      cell: ({ row }) => <span data-testid="uplink-budget">{budgetText(row.original.budget)}</span>,
    },
    {
      id: "now",
      accessorFn: (s) => s.uplink?.currentBytesPerSecond ?? -1,
      meta: { title: "Now", className: "tabular-nums" },
      cell: ({ row }) => {
        const uplink = row.original.uplink;
        if (!uplink) return <span className="text-muted-foreground">not measured</span>;
        if (!uplink.linked) return <span className="text-offline">leaf not linked</span>;
        return <span data-testid="uplink-now">{rate(uplink.currentBytesPerSecond)}</span>;
      },
    },
    {
      id: "peak",
      accessorFn: (s) => s.uplink?.peakBytesPerSecond ?? -1,
      meta: { title: "Peak", className: "tabular-nums" },
      cell: ({ row }) => {
        const uplink = row.original.uplink;
        if (!uplink) return <span className="text-muted-foreground">—</span>;
        const over = uplink.peakOfBudget !== null && uplink.peakOfBudget > OVER_BUDGET;
        return (
          <span data-testid="uplink-peak" className={over ? "text-destructive" : undefined}>
            {rate(uplink.peakBytesPerSecond)}
            {uplink.peakOfBudget !== null ? (
              <span className={over ? undefined : "text-muted-foreground"}>
                {" "}
                ({Math.round(uplink.peakOfBudget * 100)}% of budget)
              </span>
            ) : null}
          </span>
        );
      },
    },
    {
      id: "bytes",
      accessorFn: (s) => s.uplink?.bytes ?? -1,
      meta: { title: "Carried", className: "tabular-nums" },
      cell: ({ row }) =>
        row.original.uplink ? (
          <span data-testid="uplink-bytes">{formatBytes(row.original.uplink.bytes)}</span>
        ) : (
          <span className="text-muted-foreground">—</span>
        ),
    },
    {
      id: "downloads",
      accessorFn: (s) => s.downloads.pulling,
      meta: { title: "Downloading", className: "tabular-nums" },
      cell: ({ row }) => {
        const { downloads, budget } = row.original;
        return (
          <span data-testid="uplink-downloads">
            {downloads.pulling}
            {budget.concurrentDownloads !== null ? (
              <span className="text-muted-foreground">
                {" "}
                ({downloads.updating} of {budget.concurrentDownloads} updating)
              </span>
            ) : null}
          </span>
        );
      },
    },
    {
      id: "queued",
      accessorFn: (s) => s.downloads.queued,
      meta: { title: "Queued", className: "tabular-nums" },
      cell: ({ row }) => <span data-testid="uplink-queued">{row.original.downloads.queued}</span>,
    },
    {
      id: "cache",
      accessorFn: (s) => s.cache.status ?? "",
      meta: { title: "Site cache" },
      cell: ({ row }) => {
        const { cache } = row.original;
        const shown = cache.status ? CACHE[cache.status] : undefined;
        if (!shown) return <span className="text-muted-foreground">—</span>;
        return (
          <span className="grid gap-0.5">
            <Badge variant={shown.variant} data-testid="uplink-cache" data-status={cache.status ?? ""}>
              {shown.label}
            </Badge>
            {cache.reason ? <span className="text-xs text-muted-foreground">{cache.reason}</span> : null}
          </span>
        );
      },
    },
    {
      id: "chart",
      enableSorting: false,
      meta: { title: "Chart" },
      cell: ({ row }) =>
        row.original.uplink ? (
          <Button
            variant={charted === row.original.siteId ? "secondary" : "ghost"}
            size="sm"
            aria-pressed={charted === row.original.siteId}
            aria-label={`Chart ${row.original.siteName}'s rate`}
            onClick={() => onChart(row.original.siteId)}
          >
            <ChartLineIcon aria-hidden />
          </Button>
        ) : null,
    },
  ];
}

/**
 * Each site's budget use while the rollout moves (issue 11, #4): the site's budget, its uplink as
 * the hub measures it (the site leaf's NATS link), its nodes downloading and queued, its artifact
 * cache; and one site's rate against its budget over time. Polled while the rollout moves.
 */
export function SiteUplinks(props: { id: string; live: boolean }) {
  const trpc = useTRPC();
  const [chartSiteId, setChartSiteId] = useState<string | null>(null);
  const uplinks = useQuery(
    trpc.rollout.siteUplinks.queryOptions(
      { id: props.id, ...(chartSiteId ? { chartSiteId } : {}) },
      {
        retry: false,
        refetchInterval: props.live ? LIVE_MS : false,
        placeholderData: (previous) => previous,
      },
    ),
  );
  // The rollout just finished: one last read, or the table keeps what the last poll saw (a site
  // still "seeding" on a rollout that completed between two polls).
  const wasLive = useRef(props.live);
  const { refetch } = uplinks;
  useEffect(() => {
    if (wasLive.current && !props.live) void refetch();
    wasLive.current = props.live;
  }, [props.live, refetch]);
  const charted = uplinks.data?.chart?.siteId ?? null;
  const tableColumns = useMemo(() => columns(setChartSiteId, charted), [charted]);
  if (uplinks.error && !uplinks.data) return <ErrorNotice error={uplinks.error} />;
  const data = uplinks.data;
  if (!data) return null;
  const cached = data.sites.some((s) => s.cache.status !== null);
  if (!data.budgeted && !cached) return null;
  const chart = data.chart;
  return (
    <Section
      title="Site uplinks"
      description={
        data.budgeted
          ? "Each site's budget and what its uplink carries, measured at the hub on the site leaf's NATS link (every few seconds; everything on the link counts), with its nodes downloading, waiting for a slot, and its artifact cache."
          : "Each site's artifact cache for this rollout (no bandwidth budget: uplinks are not measured)."
      }
      data-testid="site-uplinks"
    >
      <DataTable
        label="Site uplinks"
        name="site-uplink-table"
        columns={tableColumns}
        data={data.sites}
        getRowId={(s) => s.siteId}
        rowTestId="site-uplink-row"
        rowData={(s) => ({
          site: s.siteName,
          peak: s.uplink ? Math.round(s.uplink.peakBytesPerSecond) : "",
          bytes: s.uplink ? Math.round(s.uplink.bytes) : "",
          budget: s.budget.bytesPerSecond ?? "",
          cache: s.cache.status ?? "",
        })}
        empty="No site's nodes are in this rollout."
      />
      {chart ? (
        <TimeChart
          title={`${chart.siteName}: uplink rate vs budget`}
          unit="MB/s"
          testId="site-uplink-chart"
          series={[
            { name: "rate", points: chart.points.map(([t, bps]): [number, number] => [t, bps / MB]) },
            ...(chart.budgetBytesPerSecond !== null && chart.points.length > 0
              ? [
                  {
                    name: "budget",
                    points: chart.points.map(([t]): [number, number] => [
                      t,
                      (chart.budgetBytesPerSecond ?? 0) / MB,
                    ]),
                  },
                ]
              : []),
          ]}
        />
      ) : null}
    </Section>
  );
}
