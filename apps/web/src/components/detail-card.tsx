import type * as React from "react";
import { cn } from "~/lib/utils";
import { QueryContent } from "./query-content";
import { Card, CardHeader } from "./ui/card";

/** One fact of a detail card: its name, its value, and how the value is set (e.g. monospace ids). */
export interface Fact {
  term: string;
  value: React.ReactNode;
  className?: string;
}

/**
 * The head of a thing's page (a site, an app, a rollout): its name as the page's heading, actions
 * beside it, its facts as a description list, then whatever the page adds (counts, alerts).
 */
export function DetailCard(props: {
  /** Also names the test id (`<id>`) and the heading's id (`<id>`). */
  id: string;
  title: React.ReactNode;
  actions?: React.ReactNode;
  facts: Fact[];
  className?: string;
  children?: React.ReactNode;
}) {
  return (
    <Card aria-labelledby={props.id} className={props.className}>
      <CardHeader>
        <h2 id={props.id} className="mr-auto font-mono text-xl font-semibold" data-testid={props.id}>
          {props.title}
        </h2>
        {props.actions}
      </CardHeader>
      <dl className="grid gap-x-6 gap-y-2 text-sm sm:grid-cols-[max-content_1fr]">
        {props.facts.map((fact) => (
          <div key={fact.term} className="contents">
            <dt className="text-muted-foreground">{fact.term}</dt>
            <dd className={cn(fact.className)}>{fact.value}</dd>
          </div>
        ))}
      </dl>
      {props.children}
    </Card>
  );
}

/**
 * The body of a thing's page: what went wrong loading it, or a placeholder while it loads, then
 * its cards in two columns from lg up, the first (its DetailCard) across both.
 */
export function DetailCards<Data>(props: {
  query: { error: { message: string } | null; data: Data | undefined };
  /** Read to screen readers while loading, e.g. "Loading the site". */
  loading: string;
  children: (data: Data) => React.ReactNode;
}) {
  return (
    <QueryContent query={props.query} loading={props.loading} skeletonClassName="h-48">
      {(data) => (
        <div className="grid gap-6 lg:grid-cols-2 lg:[&>:first-child]:col-span-2">{props.children(data)}</div>
      )}
    </QueryContent>
  );
}
