import type * as React from "react";
import { cn } from "~/lib/utils";

/** A grey placeholder shaped like what is loading; announced once by its label. */
export function Skeleton({ className, ...props }: React.ComponentProps<"div">) {
  return (
    <div data-slot="skeleton" className={cn("animate-pulse rounded-md bg-muted", className)} {...props} />
  );
}
