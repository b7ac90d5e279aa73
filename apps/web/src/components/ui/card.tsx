import * as React from "react";
import { cn } from "~/lib/utils";

export function Card({ className, ...props }: React.ComponentProps<"section">) {
  return (
    <section
      data-slot="card"
      className={cn(
        "flex min-w-0 flex-col gap-4 rounded-xl border bg-card p-4 text-card-foreground shadow-xs",
        className,
      )}
      {...props}
    />
  );
}

export function CardHeader({ className, ...props }: React.ComponentProps<"div">) {
  return (
    <div data-slot="card-header" className={cn("flex flex-wrap items-center gap-2", className)} {...props} />
  );
}

export function CardTitle({ className, ...props }: React.ComponentProps<"h2">) {
  return (
    <h2 data-slot="card-title" className={cn("mr-auto text-base font-semibold", className)} {...props} />
  );
}

export function CardDescription({ className, ...props }: React.ComponentProps<"p">) {
  return (
    <p data-slot="card-description" className={cn("text-sm text-muted-foreground", className)} {...props} />
  );
}

/**
 * A titled card: the heading names the region (aria-labelledby), an optional line says what it is
 * for, `actions` sit at the right of the title. `id` also makes it a target for links (#id).
 */
export function Section({
  title,
  description,
  actions,
  id,
  children,
  ...props
}: Omit<React.ComponentProps<"section">, "title"> & {
  title: React.ReactNode;
  description?: React.ReactNode;
  actions?: React.ReactNode;
}) {
  const generated = React.useId();
  const titleId = `${id ?? generated}-title`;
  return (
    <Card id={id} aria-labelledby={titleId} {...props}>
      <CardHeader>
        <CardTitle id={titleId}>{title}</CardTitle>
        {actions}
        {description ? <CardDescription className="basis-full">{description}</CardDescription> : null}
      </CardHeader>
      {children}
    </Card>
  );
}
