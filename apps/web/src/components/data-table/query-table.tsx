"use client";

import type * as React from "react";
import { LoadMore } from "../load-more";
import { QueryContent } from "../query-content";
import { DataTable } from "./data-table";
import { lowerFirst } from "./label-words";
import { type ListData, useListRows } from "./list-rows";

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
 * paged query has more. The rows are the list the query loaded (a page's `items`, or every page
 * fetched so far) unless the view derives its own.
 */
export function QueryTable<Row>(
  props: Omit<React.ComponentProps<typeof DataTable<Row>>, "data"> & {
    loading?: string;
    skeletonClassName?: string;
  } & (
      | { query: ListQuery<ListData<NoInfer<Row>>>; rows?: undefined }
      | {
          query: ListQuery<unknown>;
          /** Rows the view built from the query's data and more (memoized: see DataTable). */
          rows: Row[];
        }
    ),
) {
  const { query, rows, loading, skeletonClassName, ...table } = props;
  const loaded = useListRows(rows ? undefined : (query.data as ListData<Row> | undefined));
  return (
    <QueryContent
      query={query}
      loading={loading ?? `Loading ${lowerFirst(props.label)}`}
      skeletonClassName={skeletonClassName}
    >
      {() => (
        <DataTable
          {...table}
          data={rows ?? loaded}
          footer={query.hasNextPage ? <LoadMore query={query} /> : table.footer}
        />
      )}
    </QueryContent>
  );
}
