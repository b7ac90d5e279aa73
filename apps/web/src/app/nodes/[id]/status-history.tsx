"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useListRows } from "~/components/data-table/list-rows";
import { LoadMore } from "~/components/load-more";
import { QueryContent } from "~/components/query-content";
import { StatusEvents } from "~/components/status-events";
import { TimeRangePicker, useTimeRange } from "~/components/time-range";
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
  const events = useListRows(history.data);
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
      <QueryContent query={availability} loading="Loading availability" skeletonClassName="h-6">
        {(data) => (
          <>
            <AvailabilityStrip segments={data.segments} from={range.from.getTime()} to={range.to.getTime()} />
            <div className="flex justify-between text-xs text-muted-foreground">
              <span>{dateTime.format(range.from)}</span>
              <span>now</span>
            </div>
          </>
        )}
      </QueryContent>
      <QueryContent query={history} loading="Loading status changes">
        {() => (
          <StatusEvents events={events} scope="node" testId="status-history" itemTestId="status-event" />
        )}
      </QueryContent>
      <LoadMore query={history} label="Older changes" size="sm" />
    </>
  );
}
