"use client";

import { formatDistanceToNowStrict } from "date-fns";

/** "3 minutes ago" or "in 6 days" (date-fns), the exact time on hover; "never" for no date. */
export function relativeTime(date: Date | null): string {
  if (!date) return "never";
  if (Math.abs(date.getTime() - Date.now()) < 10_000) return "just now";
  return formatDistanceToNowStrict(date, { addSuffix: true });
}

export function RelativeTime(props: { date: Date | null; never?: string; className?: string }) {
  if (!props.date) return <span className={props.className}>{props.never ?? "never"}</span>;
  return (
    <time dateTime={props.date.toISOString()} title={props.date.toLocaleString()} className={props.className}>
      {relativeTime(props.date)}
    </time>
  );
}
