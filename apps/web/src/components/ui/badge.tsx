import { cva, type VariantProps } from "class-variance-authority";
import type * as React from "react";
import { cn } from "~/lib/utils";

export const badgeVariants = cva(
  "inline-flex w-fit shrink-0 items-center justify-center gap-1 whitespace-nowrap rounded-md border px-2 py-0.5 text-xs font-medium [&>svg]:size-3",
  {
    variants: {
      variant: {
        default: "border-transparent bg-primary text-primary-foreground",
        secondary: "border-transparent bg-secondary text-secondary-foreground",
        outline: "text-foreground",
        destructive: "border-destructive/30 bg-destructive/10 text-destructive",
        online: "border-online/30 bg-online/10 text-online",
        offline: "border-offline/30 bg-offline/10 text-offline",
        pending: "border-pending/30 bg-pending/10 text-pending",
        revoked: "border-revoked/30 bg-revoked/10 text-revoked",
        degraded: "border-degraded/30 bg-degraded/10 text-degraded",
      },
    },
    defaultVariants: { variant: "default" },
  },
);

export function Badge({
  className,
  variant,
  ...props
}: React.ComponentProps<"span"> & VariantProps<typeof badgeVariants>) {
  return <span data-slot="badge" className={cn(badgeVariants({ variant }), className)} {...props} />;
}
