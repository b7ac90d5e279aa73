"use client";

import { keepPreviousData, useInfiniteQuery } from "@tanstack/react-query";
import { useDeferredValue, useState } from "react";
import { useTRPC } from "~/trpc/react";
import { BulkLabels } from "./bulk-labels";
import { NodeRows, type NodeSort } from "./node-rows";
import styles from "./nodes.module.css";

const PAGE_SIZE = 100;
const STATUSES = ["online", "offline", "pending", "revoked"] as const;
type Status = (typeof STATUSES)[number];

export function NodesView({ initialSelector }: { initialSelector: string }) {
  const trpc = useTRPC();
  const [selector, setSelector] = useState(initialSelector);
  const [search, setSearch] = useState("");
  const [status, setStatus] = useState<Status | "">("");
  const [sort, setSort] = useState<NodeSort>({ field: "name", direction: "asc" });
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const deferredSelector = useDeferredValue(selector.trim());
  const deferredSearch = useDeferredValue(search.trim());

  const nodes = useInfiniteQuery(
    trpc.node.list.infiniteQueryOptions(
      {
        limit: PAGE_SIZE,
        sort,
        ...(deferredSelector ? { selector: deferredSelector } : {}),
        ...(deferredSearch ? { search: deferredSearch } : {}),
        ...(status ? { status } : {}),
      },
      // Keep showing the last good rows while the selector is being typed.
      { getNextPageParam: (page) => page.nextCursor, placeholderData: keepPreviousData, retry: false },
    ),
  );
  const items = nodes.data?.pages.flatMap((page) => page.items) ?? [];
  const selectorError = nodes.error && /selector/.test(nodes.error.message) ? nodes.error.message : null;
  const otherError = nodes.error && !selectorError ? nodes.error.message : null;

  return (
    <>
      <div className={styles.toolbar}>
        <label className={styles.selector}>
          <span>Selector</span>
          <input
            aria-label="Label selector"
            placeholder="site=plant-7,tier!=canary"
            value={selector}
            maxLength={1000}
            aria-invalid={selectorError ? true : undefined}
            onChange={(event) => setSelector(event.target.value)}
          />
          {selectorError ? (
            <span role="alert" className={styles.fieldError} data-testid="selector-error">
              {selectorError}
            </span>
          ) : null}
        </label>
        <label>
          <span>Search</span>
          <input
            type="search"
            aria-label="Search nodes"
            placeholder="node or site name"
            value={search}
            maxLength={100}
            onChange={(event) => setSearch(event.target.value)}
          />
        </label>
        <label>
          <span>Status</span>
          <select
            aria-label="Status"
            value={status}
            onChange={(event) => setStatus(event.target.value as Status | "")}
          >
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      {otherError ? (
        <p role="alert" className={styles.error}>
          {otherError}
        </p>
      ) : null}
      <BulkLabels
        selectedIds={[...selected]}
        selector={deferredSelector}
        onDone={() => setSelected(new Set())}
      />
      {nodes.isPending ? (
        <p className={styles.muted}>Loading nodes…</p>
      ) : (
        <NodeRows
          nodes={items}
          sort={sort}
          onSort={setSort}
          selected={selected}
          onSelect={setSelected}
          hasMore={nodes.hasNextPage}
          loadMore={() => {
            if (!nodes.isFetchingNextPage) void nodes.fetchNextPage();
          }}
        />
      )}
    </>
  );
}
