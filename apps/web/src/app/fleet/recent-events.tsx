"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { ActivityIcon } from "lucide-react";
import Link from "next/link";
import { RelativeTime } from "~/components/relative-time";
import { StatusBadge } from "~/components/status-badge";
import { statusReasonText } from "~/components/status-reasons";
import { EmptyState } from "~/components/ui/empty-state";

type StatusEvent = RouterOutputs["fleet"]["events"]["items"][number];

/** Newest status changes first: when, which node, from → to, why. */
export function RecentEvents({ events }: { events: StatusEvent[] }) {
  if (events.length === 0) {
    return (
      <EmptyState icon={<ActivityIcon />} title="No status changes in the last 30 days.">
        Nodes connecting, going quiet or being revoked show up here as it happens.
      </EmptyState>
    );
  }
  return (
    <ol className="grid gap-1 text-sm" data-testid="recent-events">
      {events.map((event) => (
        <li
          key={event.id}
          data-testid="recent-event"
          data-node={event.nodeName}
          data-to={event.to}
          className="grid grid-cols-[6.5rem_minmax(0,1fr)] items-center gap-x-3 gap-y-0.5 rounded-md px-1 py-1 hover:bg-muted/50 sm:grid-cols-[6.5rem_minmax(0,1fr)_auto_auto]"
        >
          <RelativeTime date={event.at} className="text-xs text-muted-foreground" />
          <Link href={`/nodes/${event.nodeId}`} className="truncate font-mono text-primary hover:underline">
            {event.nodeName}
          </Link>
          <span className="col-start-2 flex items-center gap-1 sm:col-start-auto">
            {event.from ? <StatusBadge status={event.from} /> : null}
            {event.from ? (
              <>
                <span aria-hidden>→</span>
                <span className="sr-only">to</span>
              </>
            ) : null}
            <StatusBadge status={event.to} />
          </span>
          <span className="col-start-2 text-xs text-muted-foreground sm:col-start-auto">
            {statusReasonText(event.reason)}
          </span>
        </li>
      ))}
    </ol>
  );
}
