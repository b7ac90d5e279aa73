"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { StatusBadge } from "~/components/status-badge";
import { statusReasonText } from "~/components/status-reasons";
import { timeAgo } from "~/components/time-ago";
import { useTRPC } from "~/trpc/react";
import styles from "./detail.module.css";

type Segment = RouterOutputs["node"]["availability"]["segments"][number];

const RANGES = [
  { label: "24h", hours: 24 },
  { label: "7d", hours: 7 * 24 },
  { label: "30d", hours: 30 * 24 },
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
      className={styles.strip}
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
  const [hours, setHours] = useState<number>(24);
  // The range end moves with the clock once a minute; live changes invalidate the query anyway.
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 60_000);
    return () => clearInterval(timer);
  }, []);
  const range = { from: new Date(now - hours * 3_600_000), to: new Date(now) };
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
      <div className={styles.stripHead}>
        <fieldset className={styles.ranges} aria-label="Availability range">
          {RANGES.map((r) => (
            <button
              key={r.label}
              type="button"
              aria-pressed={hours === r.hours}
              className={hours === r.hours ? styles.activeRange : undefined}
              onClick={() => {
                setHours(r.hours);
                setNow(Date.now());
              }}
            >
              {r.label}
            </button>
          ))}
        </fieldset>
        <span data-testid="online-ratio">
          {ratio === null || ratio === undefined
            ? "—"
            : `${(ratio * 100).toFixed(ratio > 0.999 ? 0 : 1)}% online`}
        </span>
      </div>
      {availability.error ? (
        <p role="alert" className={styles.error}>
          {availability.error.message}
        </p>
      ) : availability.data ? (
        <>
          <AvailabilityStrip
            segments={availability.data.segments}
            from={range.from.getTime()}
            to={range.to.getTime()}
          />
          <div className={styles.stripAxis}>
            <span>{dateTime.format(range.from)}</span>
            <span>now</span>
          </div>
        </>
      ) : (
        <p className={styles.muted}>Loading…</p>
      )}
      {history.error ? (
        <p role="alert" className={styles.error}>
          {history.error.message}
        </p>
      ) : null}
      {history.data && events.length === 0 ? (
        <p className={styles.muted}>No status changes in the last 30 days.</p>
      ) : null}
      <ol className={styles.history} data-testid="status-history">
        {events.map((event) => (
          <li key={event.id} data-testid="status-event" data-to={event.to}>
            <time dateTime={event.at.toISOString()} title={event.at.toLocaleString()}>
              {dateTime.format(event.at)} <span className={styles.muted}>({timeAgo(event.at)})</span>
            </time>
            <span>
              {event.from ? <StatusBadge status={event.from} /> : null}
              {event.from ? " → " : null}
              <StatusBadge status={event.to} />
            </span>
            <span className={styles.muted}>{statusReasonText(event.reason)}</span>
          </li>
        ))}
      </ol>
      {history.hasNextPage ? (
        <button
          type="button"
          onClick={() => void history.fetchNextPage()}
          disabled={history.isFetchingNextPage}
        >
          {history.isFetchingNextPage ? "Loading…" : "Older changes"}
        </button>
      ) : null}
    </>
  );
}
