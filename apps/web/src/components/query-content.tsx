import type * as React from "react";
import { ErrorNotice } from "./error-notice";
import { Skeleton } from "./ui/skeleton";

/**
 * The three states of loaded data, said the same way everywhere: what went wrong (and what to do),
 * a placeholder shaped like the content while it loads, then the content.
 */
export function QueryContent<Data>(props: {
  query: { error: { message: string } | null; data: Data | undefined };
  /** Read to screen readers while loading, e.g. "Loading tokens". */
  loading: string;
  skeletonClassName?: string;
  children: (data: Data) => React.ReactNode;
}) {
  if (props.query.error) return <ErrorNotice error={props.query.error} />;
  if (props.query.data === undefined) {
    return <Skeleton className={props.skeletonClassName ?? "h-24"} aria-label={props.loading} />;
  }
  return <>{props.children(props.query.data)}</>;
}
