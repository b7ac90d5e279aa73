import { cn } from "~/lib/utils";

const ORDER = ["online", "offline", "pending", "revoked"] as const;
type Status = (typeof ORDER)[number];
const COLOR: Record<Status, string> = {
  online: "bg-online",
  offline: "bg-offline",
  pending: "bg-pending",
  revoked: "bg-revoked/60",
};

/** Shares of nodes per status as one bar (green online, red offline, …); empty when there are none. */
export function StatusBar(props: {
  byStatus: Partial<Record<Status, number>>;
  label: string;
  className?: string;
}) {
  const total = ORDER.reduce((sum, status) => sum + (props.byStatus[status] ?? 0), 0);
  const parts = ORDER.filter((status) => (props.byStatus[status] ?? 0) > 0);
  return (
    <div
      role="img"
      aria-label={`${props.label}: ${parts.map((s) => `${props.byStatus[s]} ${s}`).join(", ") || "no nodes"}`}
      className={cn("flex h-2 w-full gap-px overflow-hidden rounded-full bg-muted", props.className)}
    >
      {parts.map((status) => {
        const count = props.byStatus[status] ?? 0;
        return (
          <span
            key={status}
            className={COLOR[status]}
            style={{ flexGrow: count }}
            title={`${status}: ${count} of ${total}`}
          />
        );
      })}
    </div>
  );
}
