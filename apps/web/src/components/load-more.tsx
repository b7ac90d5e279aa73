"use client";

import { Button } from "./ui/button";

/** The next page of a paged (infinite) query, while it has one; "Loading…" while it comes. */
export function LoadMore(props: {
  query: { hasNextPage?: boolean; isFetchingNextPage?: boolean; fetchNextPage?: () => Promise<unknown> };
  label?: string;
  size?: "sm" | "default";
}) {
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = props.query;
  if (!hasNextPage || !fetchNextPage) return null;
  return (
    <Button
      type="button"
      variant="outline"
      size={props.size ?? "default"}
      className="justify-self-start"
      disabled={isFetchingNextPage}
      onClick={() => void fetchNextPage()}
    >
      {isFetchingNextPage ? "Loading…" : (props.label ?? "Load more")}
    </Button>
  );
}
