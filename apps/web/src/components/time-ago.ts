const relativeTime = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

/** "15 seconds ago", "3 hours ago", or "never". */
export function timeAgo(date: Date | null): string {
  if (!date) return "never";
  const seconds = Math.round((date.getTime() - Date.now()) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 60) return relativeTime.format(seconds, "second");
  if (abs < 3600) return relativeTime.format(Math.round(seconds / 60), "minute");
  if (abs < 86400) return relativeTime.format(Math.round(seconds / 3600), "hour");
  return relativeTime.format(Math.round(seconds / 86400), "day");
}
