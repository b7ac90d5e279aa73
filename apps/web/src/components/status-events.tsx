"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { ActivityIcon } from "lucide-react";
import Link from "next/link";
import { cn } from "~/lib/utils";
import { RelativeTime, relativeTime } from "./relative-time";
import { StatusBadge } from "./status-badge";
import { statusReasonText } from "./status-reasons";
import { EmptyState } from "./ui/empty-state";

type StatusEvent = RouterOutputs["fleet"]["events"]["items"][number];

const dateTime = new Intl.DateTimeFormat("en", { dateStyle: "medium", timeStyle: "short" });

/**
 * Node status changes, newest first: when, which node, from → to, and why. On the fleet page
 * (`scope="fleet"`) each names its node and says when relative to now; on a node's own page
 * (`scope="node"`) the node goes without saying and the date comes first.
 */
export function StatusEvents(props: {
  events: StatusEvent[];
  scope: "fleet" | "node";
  testId: string;
  itemTestId: string;
}) {
  const fleet = props.scope === "fleet";
  if (props.events.length === 0) {
    return (
      <EmptyState icon={<ActivityIcon />} title="No status changes in the last 30 days.">
        {fleet ? "Nodes connecting" : "The node connecting"}, going quiet or being revoked show up here as it
        happens.
      </EmptyState>
    );
  }
  return (
    <ol className="grid gap-1 text-sm" data-testid={props.testId}>
      {props.events.map((event) => (
        <li
          key={event.id}
          data-testid={props.itemTestId}
          data-node={event.nodeName}
          data-to={event.to}
          className={cn(
            "grid items-center gap-x-3 gap-y-0.5 rounded-md px-1 py-1 hover:bg-muted/50",
            fleet
              ? "grid-cols-[6.5rem_minmax(0,1fr)] sm:grid-cols-[6.5rem_minmax(0,1fr)_auto_auto]"
              : "sm:grid-cols-[16rem_auto_1fr]",
          )}
        >
          {fleet ? (
            <>
              <RelativeTime date={event.at} className="text-xs text-muted-foreground" />
              <Link
                href={`/nodes/${event.nodeId}`}
                className="truncate font-mono text-primary hover:underline"
              >
                {event.nodeName}
              </Link>
            </>
          ) : (
            <time dateTime={event.at.toISOString()} title={event.at.toLocaleString()}>
              {dateTime.format(event.at)}{" "}
              <span className="text-muted-foreground">({relativeTime(event.at)})</span>
            </time>
          )}
          <span className={cn("flex items-center gap-1", fleet && "col-start-2 sm:col-start-auto")}>
            {event.from ? (
              <>
                <StatusBadge status={event.from} />
                <span aria-hidden>→</span>
                <span className="sr-only">to</span>
              </>
            ) : null}
            <StatusBadge status={event.to} />
          </span>
          <span className={cn("text-muted-foreground", fleet && "col-start-2 text-xs sm:col-start-auto")}>
            {statusReasonText(event.reason)}
          </span>
        </li>
      ))}
    </ol>
  );
}
