"use client";

import { nodeFilters, nodeSortFields, nodeStatuses } from "@edgefleet/api/schemas";
import { keepPreviousData, useInfiniteQuery } from "@tanstack/react-query";
import type { RowSelectionState } from "@tanstack/react-table";
import { useDeferredValue, useState } from "react";
import { useListRows } from "~/components/data-table/list-rows";
import { FilterCard, useUrlFilters } from "~/components/data-table/url-filters";
import { useTableState } from "~/components/data-table/use-url-state";
import { ErrorNotice } from "~/components/error-notice";
import { SelectField, TextField } from "~/components/forms/fields";
import { Card } from "~/components/ui/card";
import { Skeleton } from "~/components/ui/skeleton";
import { useTRPC } from "~/trpc/react";
import { BulkCommands } from "./bulk-commands";
import { BulkLabels } from "./bulk-labels";
import { NodeTable } from "./node-table";

const PAGE_SIZE = 100;
const STATUS_OPTIONS = [{ value: "", label: "any" }, ...nodeStatuses.map((s) => ({ value: s, label: s }))];

/**
 * Filters (selector, search, status), sorting and shown columns all live in the URL, so a view of
 * the fleet can be shared or bookmarked; the fields keep their own text while being typed.
 */
export function NodesView() {
  const trpc = useTRPC();
  const filters = useUrlFilters(nodeFilters, { selector: "selector", search: "q", status: "status" });
  const { selector, search, status } = filters.applied;
  // Sorted by the server (node.list's `sort`), so only its sort fields are taken from the address.
  const view = useTableState("", nodeSortFields);
  const activeSort = view.sorting[0] ?? { id: "name", desc: false };
  const [selected, setSelected] = useState<RowSelectionState>({});
  const deferredSelector = useDeferredValue(selector);
  const deferredSearch = useDeferredValue(search);

  const nodes = useInfiniteQuery(
    trpc.node.list.infiniteQueryOptions(
      {
        limit: PAGE_SIZE,
        sort: {
          field: activeSort.id as (typeof nodeSortFields)[number],
          direction: activeSort.desc ? "desc" : "asc",
        },
        ...(deferredSelector ? { selector: deferredSelector } : {}),
        ...(deferredSearch ? { search: deferredSearch } : {}),
        ...(status ? { status } : {}),
      },
      // Keep showing the last good rows while the selector is being typed.
      { getNextPageParam: (page) => page.nextCursor, placeholderData: keepPreviousData, retry: false },
    ),
  );
  const items = useListRows(nodes.data);
  const selectedIds = Object.keys(selected).filter((id) => selected[id]);

  return (
    <>
      <FilterCard
        form={filters.form}
        className="grid gap-4 sm:grid-cols-[minmax(0,2fr)_minmax(0,1fr)_minmax(0,10rem)]"
      >
        <TextField
          name="selector"
          label="Selector"
          accessibleName="Label selector"
          className="[&_input]:font-mono"
          placeholder="site=plant-7,tier!=canary"
        />
        <TextField
          name="search"
          label="Search"
          accessibleName="Search nodes"
          type="search"
          placeholder="node or site name"
          maxLength={100}
        />
        <SelectField name="status" label="Status" options={STATUS_OPTIONS} />
      </FilterCard>
      {nodes.error ? <ErrorNotice error={nodes.error} /> : null}
      <Card aria-label="Node list">
        {nodes.isPending ? (
          <Skeleton className="h-96" aria-label="Loading nodes" />
        ) : (
          <NodeTable
            nodes={items}
            filtered={Boolean(deferredSelector || deferredSearch || status)}
            view={view}
            selection={selected}
            onSelectionChange={setSelected}
            hasMore={nodes.hasNextPage}
            loadMore={() => {
              if (!nodes.isFetchingNextPage) void nodes.fetchNextPage();
            }}
            toolbar={
              <>
                <BulkCommands selectedIds={selectedIds} />
                <BulkLabels
                  selectedIds={selectedIds}
                  selector={deferredSelector}
                  onDone={() => setSelected({})}
                />
              </>
            }
          />
        )}
      </Card>
    </>
  );
}
