"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { ErrorNotice } from "~/components/error-notice";
import { relativeTime } from "~/components/relative-time";
import { StatusBadge } from "~/components/status-badge";
import { statusReasonText } from "~/components/status-reasons";
import { TimeRangePicker, useTimeRange } from "~/components/time-range";
import { Button } from "~/components/ui/button";
import { Skeleton } from "~/components/ui/skeleton";
import { useTRPC } from "~/trpc/react";

type Segment = RouterOutputs["node"]["availability"]["segments"][number];

const HOUR = 3_600_000;
const RANGES = [
  { label: "24h", span: 24 * HOUR },
  { label: "7d", span: 7 * 24 * HOUR },
  { label: "30d", span: 30 * 24 * HOUR },
] as const;

const COLOR: Record<string, string> = {
  online: "var(--online)",
  offline: "var(--offline)",
  pending: "var(--pending)",
  revoked: "var(--revoked)",
};

const dateTime = new Intl.DateTimeFormat("en", { dateStyle: "medium", timeStyle: "short" });

/** The node's status over the range as one coloured bar: green online, red offline, grey unknown. */
function AvailabilityStrip(props: { segments: Segment[]; from: number; to: number }) {
  const span = props.to - props.from;
  return (
    <svg
      className="block h-6 w-full overflow-hidden rounded"
      viewBox="0 0 1000 24"
      preserveAspectRatio="none"
      role="img"
      aria-label="Availability over the range"
      data-testid="availability-strip"
    >
      <rect x={0} y={0} width={1000} height={24} fill="var(--border)" />
      {props.segments.map((segment) => {
        const x = ((segment.from.getTime() - props.from) / span) * 1000;
        const width = Math.max(((segment.to.getTime() - segment.from.getTime()) / span) * 1000, 0.5);
        return (
          <rect
            key={segment.from.getTime()}
            x={x}
            y={0}
            width={width}
            height={24}
            fill={segment.status ? COLOR[segment.status] : "var(--border)"}
            data-status={segment.status ?? "unknown"}
          >
            <title>
              {`${segment.status ?? "unknown"}: ${dateTime.format(segment.from)} – ${dateTime.format(segment.to)}`}
            </title>
          </rect>
        );
      })}
    </svg>
  );
}

export function StatusHistory({ nodeId }: { nodeId: string }) {
  const trpc = useTRPC();
  // The range end moves with the clock once a minute; live changes invalidate the query anyway.
  const timeRange = useTimeRange(RANGES, "24h", 60_000);
  const range = timeRange.range;
  const availability = useQuery(
    trpc.node.availability.queryOptions({ nodeId, range }, { placeholderData: (previous) => previous }),
  );
  const history = useInfiniteQuery(
    trpc.node.statusHistory.infiniteQueryOptions(
      { nodeId, limit: 20 },
      { getNextPageParam: (page) => page.nextCursor ?? undefined },
    ),
  );
  const events = history.data?.pages.flatMap((page) => page.items) ?? [];
  const ratio = availability.data?.onlineRatio;

  return (
    <>
      <div className="flex flex-wrap items-center justify-between gap-2">
        <TimeRangePicker label="Availability range" choices={RANGES} range={timeRange} />
        <span data-testid="online-ratio" className="text-sm font-medium">
          {ratio === null || ratio === undefined
            ? "—"
            : `${(ratio * 100).toFixed(ratio > 0.999 ? 0 : 1)}% online`}
        </span>
      </div>
      {availability.error ? (
        <ErrorNotice error={availability.error} />
      ) : availability.data ? (
        <>
          <AvailabilityStrip
            segments={availability.data.segments}
            from={range.from.getTime()}
            to={range.to.getTime()}
          />
          <div className="flex justify-between text-xs text-muted-foreground">
            <span>{dateTime.format(range.from)}</span>
            <span>now</span>
          </div>
        </>
      ) : (
        <Skeleton className="h-6" aria-label="Loading availability" />
      )}
      {history.error ? <ErrorNotice error={history.error} /> : null}
      {history.data && events.length === 0 ? (
        <p className="text-sm text-muted-foreground">No status changes in the last 30 days.</p>
      ) : null}
      <ol className="grid gap-1 text-sm" data-testid="status-history">
        {events.map((event) => (
          <li
            key={event.id}
            data-testid="status-event"
            data-to={event.to}
            className="grid gap-x-3 gap-y-0.5 sm:grid-cols-[16rem_auto_1fr] sm:items-center"
          >
            <time dateTime={event.at.toISOString()} title={event.at.toLocaleString()}>
              {dateTime.format(event.at)}{" "}
              <span className="text-muted-foreground">({relativeTime(event.at)})</span>
            </time>
            <span className="flex items-center gap-1">
              {event.from ? <StatusBadge status={event.from} /> : null}
              {event.from ? " → " : null}
              <StatusBadge status={event.to} />
            </span>
            <span className="text-muted-foreground">{statusReasonText(event.reason)}</span>
          </li>
        ))}
      </ol>
      {history.hasNextPage ? (
        <Button
          type="button"
          variant="outline"
          size="sm"
          className="justify-self-start"
          onClick={() => void history.fetchNextPage()}
          disabled={history.isFetchingNextPage}
        >
          {history.isFetchingNextPage ? "Loading…" : "Older changes"}
        </Button>
      ) : null}
    </>
  );
}
