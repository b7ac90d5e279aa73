"use client";

import type { RouterOutputs } from "@edgefleet/api";
import Link from "next/link";
import { StatusBadge } from "~/components/status-badge";
import { statusReasonText } from "~/components/status-reasons";
import { timeAgo } from "~/components/time-ago";
import styles from "./fleet.module.css";

type StatusEvent = RouterOutputs["fleet"]["events"]["items"][number];

/** Newest status changes first: when, which node, from → to, why. */
export function RecentEvents({ events }: { events: StatusEvent[] }) {
  if (events.length === 0) return <p className={styles.muted}>No status changes in the last 30 days.</p>;
  return (
    <ol className={styles.events} data-testid="recent-events">
      {events.map((event) => (
        <li key={event.id} data-testid="recent-event" data-node={event.nodeName} data-to={event.to}>
          <time dateTime={event.at.toISOString()} title={event.at.toLocaleString()} className={styles.muted}>
            {timeAgo(event.at)}
          </time>
          <Link href={`/nodes/${event.nodeId}`} className="mono">
            {event.nodeName}
          </Link>
          <span className={styles.transition}>
            {event.from ? <StatusBadge status={event.from} /> : null}
            {event.from ? " → " : null}
            <StatusBadge status={event.to} />
          </span>
          <span className={styles.muted}>{statusReasonText(event.reason)}</span>
        </li>
      ))}
    </ol>
  );
}
