import type * as React from "react";
import { cn } from "~/lib/utils";

/**
 * A grey placeholder shaped like what is loading; announced once by its label (a labelled
 * skeleton is a status: ARIA allows a label on a role, not on a bare div).
 */
export function Skeleton({ className, ...props }: React.ComponentProps<"div">) {
  return (
    <div
      data-slot="skeleton"
      role={props["aria-label"] ? "status" : undefined}
      className={cn("animate-pulse rounded-md bg-muted", className)}
      {...props}
    />
  );
}
