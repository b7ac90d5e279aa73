import { cn } from "~/lib/utils";
import type { LiveState } from "./use-fleet-live";

const TEXT: Record<LiveState, string> = { live: "live", connecting: "connecting…", offline: "not live" };
const DOT: Record<LiveState, string> = { live: "bg-online", connecting: "bg-pending", offline: "bg-offline" };

/** A dot and a word saying whether the page is receiving live updates. */
export function LiveIndicator({ state }: { state: LiveState }) {
  return (
    <span
      data-testid="live-state"
      data-state={state}
      title="Updates arrive without reloading while this says live"
      className="inline-flex items-center gap-1.5 text-xs whitespace-nowrap text-muted-foreground"
    >
      <span
        aria-hidden
        className={cn("size-2 rounded-full", DOT[state], state === "live" && "animate-pulse")}
      />
      {TEXT[state]}
    </span>
  );
}
