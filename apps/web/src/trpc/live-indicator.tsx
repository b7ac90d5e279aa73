import type { LiveState } from "./use-fleet-live";

const TEXT: Record<LiveState, string> = { live: "live", connecting: "connecting…", offline: "not live" };
const COLOR: Record<LiveState, string> = {
  live: "var(--online)",
  connecting: "var(--pending)",
  offline: "var(--offline)",
};

/** A dot and a word saying whether the page is receiving live updates. */
export function LiveIndicator({ state }: { state: LiveState }) {
  return (
    <span
      data-testid="live-state"
      data-state={state}
      title="Updates arrive without reloading while this says live"
      style={{ color: "var(--muted)", fontSize: "0.8rem", whiteSpace: "nowrap" }}
    >
      <span aria-hidden style={{ color: COLOR[state] }}>
        ●
      </span>{" "}
      {TEXT[state]}
    </span>
  );
}
