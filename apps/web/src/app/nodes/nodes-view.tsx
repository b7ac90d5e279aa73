"use client";

import { nodeSortFields, nodeStatuses } from "@edgefleet/api/schemas";
import { keepPreviousData, useInfiniteQuery } from "@tanstack/react-query";
import type { RowSelectionState } from "@tanstack/react-table";
import { useDeferredValue, useState } from "react";
import { useListRows } from "~/components/data-table/list-rows";
import { useTableState, useUrlState } from "~/components/data-table/use-url-state";
import { ErrorNotice } from "~/components/error-notice";
import { Card } from "~/components/ui/card";
import { Input } from "~/components/ui/input";
import { Label } from "~/components/ui/label";
import { NativeSelect } from "~/components/ui/native-select";
import { Skeleton } from "~/components/ui/skeleton";
import { useTRPC } from "~/trpc/react";
import { BulkCommands } from "./bulk-commands";
import { BulkLabels } from "./bulk-labels";
import { NodeTable } from "./node-table";

const PAGE_SIZE = 100;
type Status = (typeof nodeStatuses)[number];

/**
 * Filters (selector, search, status), sorting and shown columns all live in the URL, so a view of
 * the fleet can be shared or bookmarked; the fields keep their own text while being typed.
 */
export function NodesView() {
  const trpc = useTRPC();
  const url = useUrlState();
  const [selector, setSelector] = useState(url.get("selector") ?? "");
  const [search, setSearch] = useState(url.get("q") ?? "");
  const statusParam = url.get("status");
  const status = nodeStatuses.includes(statusParam as Status) ? (statusParam as Status) : "";
  // Sorted by the server (node.list's `sort`), so only its sort fields are taken from the address.
  const view = useTableState("", nodeSortFields);
  const activeSort = view.sorting[0] ?? { id: "name", desc: false };
  const [selected, setSelected] = useState<RowSelectionState>({});
  const deferredSelector = useDeferredValue(selector.trim());
  const deferredSearch = useDeferredValue(search.trim());

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
  const selectorError = nodes.error && /selector/.test(nodes.error.message) ? nodes.error.message : null;
  const otherError = nodes.error && !selectorError ? nodes.error : null;
  const selectedIds = Object.keys(selected).filter((id) => selected[id]);

  return (
    <>
      <Card
        aria-label="Filters"
        className="grid gap-4 sm:grid-cols-[minmax(0,2fr)_minmax(0,1fr)_minmax(0,10rem)]"
      >
        <div className="grid content-start gap-1.5">
          <Label htmlFor="node-selector">Selector</Label>
          <Input
            id="node-selector"
            aria-label="Label selector"
            className="font-mono"
            placeholder="site=plant-7,tier!=canary"
            value={selector}
            maxLength={1000}
            aria-invalid={selectorError ? true : undefined}
            aria-describedby={selectorError ? "selector-error" : undefined}
            onChange={(event) => {
              setSelector(event.target.value);
              url.set({ selector: event.target.value.trim() });
            }}
          />
          {selectorError ? (
            <p
              id="selector-error"
              role="alert"
              className="text-xs text-destructive"
              data-testid="selector-error"
            >
              {selectorError}
            </p>
          ) : null}
        </div>
        <div className="grid content-start gap-1.5">
          <Label htmlFor="node-search">Search</Label>
          <Input
            id="node-search"
            type="search"
            aria-label="Search nodes"
            placeholder="node or site name"
            value={search}
            maxLength={100}
            onChange={(event) => {
              setSearch(event.target.value);
              url.set({ q: event.target.value.trim() });
            }}
          />
        </div>
        <div className="grid content-start gap-1.5">
          <Label htmlFor="node-status">Status</Label>
          <NativeSelect
            id="node-status"
            value={status}
            onChange={(event) => url.set({ status: event.target.value })}
          >
            <option value="">any</option>
            {nodeStatuses.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </NativeSelect>
        </div>
      </Card>
      {otherError ? <ErrorNotice error={otherError} /> : null}
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
