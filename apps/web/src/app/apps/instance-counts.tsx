import { cn } from "~/lib/utils";

/** Instance states worth a colour; the rest (pending, stopped) show in the total only. */
const SHOWN = [
  { state: "running", className: "text-online" },
  { state: "pulling", className: "text-pending" },
  { state: "starting", className: "text-pending" },
  { state: "failed", className: "text-destructive" },
] as const;

/** "12 · 10 running · 2 failed": where an app or version runs, by the state its agents report. */
export function InstanceCounts(props: {
  total: number;
  byState: Partial<Record<string, number>>;
  testId?: string;
}) {
  return (
    <span className="inline-flex flex-wrap gap-x-2 tabular-nums" data-testid={props.testId}>
      <span>{props.total}</span>
      {SHOWN.map(({ state, className }) => {
        const count = props.byState[state] ?? 0;
        return count > 0 ? (
          <span key={state} className={cn(className)} data-state={state} data-count={count}>
            · {count} {state}
          </span>
        ) : null;
      })}
    </span>
  );
}
