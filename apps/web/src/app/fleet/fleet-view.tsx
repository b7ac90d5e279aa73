"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useDeferredValue, useState } from "react";
import { useTRPC } from "~/trpc/react";
import styles from "./fleet.module.css";
import { NodeTable } from "./node-table";
import { StatusCounts } from "./status-counts";

const PAGE_SIZE = 50;

export function FleetView() {
  const trpc = useTRPC();
  const [search, setSearch] = useState("");
  const deferredSearch = useDeferredValue(search.trim());

  const counts = useQuery(trpc.node.counts.queryOptions());
  const nodes = useInfiniteQuery(
    trpc.node.list.infiniteQueryOptions(
      { limit: PAGE_SIZE, ...(deferredSearch ? { search: deferredSearch } : {}) },
      { getNextPageParam: (page) => page.nextCursor },
    ),
  );

  const error = counts.error ?? nodes.error;
  const items = nodes.data?.pages.flatMap((page) => page.items) ?? [];

  return (
    <>
      {counts.data ? <StatusCounts counts={counts.data} /> : null}
      <div className={styles.toolbar}>
        <input
          type="search"
          placeholder="Search nodes or sites"
          aria-label="Search nodes"
          value={search}
          maxLength={100}
          onChange={(event) => setSearch(event.target.value)}
        />
      </div>
      {error ? (
        <p role="alert" className={styles.error}>
          {error.message}
        </p>
      ) : nodes.isPending ? (
        <p className={styles.muted}>Loading nodes…</p>
      ) : (
        <>
          <NodeTable nodes={items} />
          {nodes.hasNextPage ? (
            <button type="button" onClick={() => nodes.fetchNextPage()} disabled={nodes.isFetchingNextPage}>
              {nodes.isFetchingNextPage ? "Loading…" : "Load more"}
            </button>
          ) : null}
        </>
      )}
    </>
  );
}
