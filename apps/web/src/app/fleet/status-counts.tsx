import type { RouterOutputs } from "@edgefleet/api";
import { NODE_STATUS_COLOURS } from "~/components/status-badge";
import { cn } from "~/lib/utils";

// Type-only import from the API: its runtime code (Prisma) must stay out of the browser bundle.
type NodeCounts = RouterOutputs["node"]["counts"];

function Stat(props: { label: string; value: number; testId: string; className?: string; title?: string }) {
  return (
    <li className="grid min-w-24 gap-0.5" title={props.title}>
      <strong
        data-testid={props.testId}
        className={cn("text-2xl font-semibold tabular-nums", props.className)}
      >
        {props.value}
      </strong>
      <span className="text-xs text-muted-foreground">{props.label}</span>
    </li>
  );
}

export function StatusCounts({ counts }: { counts: NodeCounts }) {
  return (
    <ul className="flex flex-wrap gap-x-6 gap-y-3" aria-label="Nodes by status">
      <Stat label="nodes" value={counts.total} testId="count-total" />
      {NODE_STATUS_COLOURS.map(({ status, className }) => (
        <Stat
          key={status}
          label={status}
          value={counts.byStatus[status] ?? 0}
          testId={`count-${status}`}
          className={className}
        />
      ))}
      <Stat
        label="degraded"
        value={counts.degraded}
        testId="count-degraded"
        className="text-degraded"
        title="Online nodes with a failed app"
      />
    </ul>
  );
}
