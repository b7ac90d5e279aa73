import type { VariantProps } from "class-variance-authority";
import type { badgeVariants } from "~/components/ui/badge";

type Variant = NonNullable<VariantProps<typeof badgeVariants>["variant"]>;

/** A rollout's status as people read it, with its colour. */
export function rolloutStatus(status: string): { label: string; variant: Variant } {
  const label = status.replace(/_/g, " ");
  switch (status) {
    case "completed":
      return { label, variant: "online" };
    case "running":
    case "rolling_back":
      return { label, variant: "default" };
    case "awaiting_approval":
    case "paused":
    case "pending":
      return { label, variant: "pending" };
    case "failed":
      return { label, variant: "destructive" };
    default:
      return { label, variant: "secondary" };
  }
}

/** Statuses in which nothing moves any more: the page stops polling. */
export const FINISHED_STATUSES = new Set(["completed", "cancelled", "rolled_back"]);
