"use client";

import type * as React from "react";
import { QueryContent } from "../query-content";
import { Button } from "../ui/button";
import { DataTable } from "./data-table";
import { listRows } from "./list-rows";

/** A loaded list as React Query gives it; a paged (infinite) query also says how to load more. */
interface ListQuery<Data> {
  error: { message: string } | null;
  data: Data | undefined;
  hasNextPage?: boolean;
  isFetchingNextPage?: boolean;
  fetchNextPage?: () => Promise<unknown>;
}

/**
 * The console's table of what one query loads: the query's error or a placeholder while it loads
 * (read as "Loading <label>" unless told), then the DataTable, with "Load more" under it while a
 * paged query has more. Rows are told apart by their `id` unless `getRowId` says otherwise.
 */
export function QueryTable<Data, Row>(
  props: Omit<React.ComponentProps<typeof DataTable<Row>>, "data" | "getRowId"> & {
    query: ListQuery<Data>;
    /** The rows in what the query loaded; by default the list itself or a list page's `items`. */
    rows?: (data: Data) => Row[];
    getRowId?: (row: Row) => string;
    loading?: string;
    skeletonClassName?: string;
  },
) {
  const { query, rows, getRowId, loading, skeletonClassName, ...table } = props;
  const more = query.hasNextPage && query.fetchNextPage ? query.fetchNextPage : null;
  return (
    <QueryContent
      query={query}
      loading={loading ?? `Loading ${props.label.toLowerCase()}`}
      skeletonClassName={skeletonClassName}
    >
      {(data) => (
        <DataTable
          {...table}
          data={rows ? rows(data) : listRows(data as Row[] | { items: Row[] })}
          getRowId={getRowId ?? ((row) => (row as { id: string }).id)}
          footer={
            more ? (
              <Button
                type="button"
                variant="outline"
                className="justify-self-start"
                disabled={query.isFetchingNextPage}
                onClick={() => void more()}
              >
                {query.isFetchingNextPage ? "Loading…" : "Load more"}
              </Button>
            ) : (
              table.footer
            )
          }
        />
      )}
    </QueryContent>
  );
}
