import type * as React from "react";
import { cn } from "~/lib/utils";

/** What a list says when it has nothing: what this is, and the one thing to do next. */
export function EmptyState(props: {
  icon?: React.ReactNode;
  title: string;
  children?: React.ReactNode;
  action?: React.ReactNode;
  className?: string;
  testId?: string;
}) {
  return (
    <div
      data-testid={props.testId ?? "empty-state"}
      className={cn(
        "flex flex-col items-center gap-2 rounded-lg border border-dashed px-4 py-8 text-center",
        props.className,
      )}
    >
      {props.icon ? (
        <div aria-hidden className="text-muted-foreground [&_svg]:size-8">
          {props.icon}
        </div>
      ) : null}
      <p className="font-medium">{props.title}</p>
      {props.children ? (
        <div className="max-w-prose text-sm text-muted-foreground">{props.children}</div>
      ) : null}
      {props.action ? <div className="mt-2">{props.action}</div> : null}
    </div>
  );
}
