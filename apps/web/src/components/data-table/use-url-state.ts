"use client";

import type { OnChangeFn, SortingState, VisibilityState } from "@tanstack/react-table";
import { usePathname, useSearchParams } from "next/navigation";
import { useCallback } from "react";

/**
 * Table and filter state kept in the address (shareable, survives a reload): read from the search
 * params, written with `history.replaceState`, which Next.js syncs into `useSearchParams` without
 * asking the server for the page again (typing in a filter must not re-render the server side).
 */
export function useUrlState() {
  const params = useSearchParams();
  const pathname = usePathname();
  const set = useCallback(
    (changes: Record<string, string | null | undefined>) => {
      const next = new URLSearchParams(window.location.search);
      for (const [key, value] of Object.entries(changes)) {
        if (value) next.set(key, value);
        else next.delete(key);
      }
      const query = next.toString();
      window.history.replaceState(window.history.state, "", query ? `${pathname}?${query}` : pathname);
    },
    [pathname],
  );
  return { get: (key: string) => params.get(key), set };
}

/** `name.desc` ⇄ { id: "name", desc: true }; unknown columns are ignored. */
export function parseSort(value: string | null, columns: readonly string[]) {
  if (!value) return [];
  const [id = "", direction] = value.split(".");
  return columns.includes(id) ? [{ id, desc: direction === "desc" }] : [];
}

export function formatSort(sorting: Array<{ id: string; desc: boolean }>): string | null {
  const first = sorting[0];
  return first ? `${first.id}.${first.desc ? "desc" : "asc"}` : null;
}

/** Hidden columns as a comma list ⇄ TanStack's visibility state. */
export function parseHidden(value: string | null): Record<string, boolean> {
  return Object.fromEntries(
    (value ?? "")
      .split(",")
      .filter(Boolean)
      .map((id) => [id, false]),
  );
}

export function formatHidden(visibility: Record<string, boolean>): string | null {
  const hidden = Object.entries(visibility)
    .filter(([, visible]) => !visible)
    .map(([id]) => id);
  return hidden.length > 0 ? hidden.join(",") : null;
}

/**
 * A table's sorting and hidden columns, the props TanStack Table takes for them: kept in the
 * address under `<key>sort` and `<key>hide` (a shared link or a reload shows the same view).
 * Sorting by a column not in `sortable` is ignored.
 */
export function useTableState(key: string, sortable: readonly string[]) {
  const url = useUrlState();
  const sorting = parseSort(url.get(`${key}sort`), sortable);
  const columnVisibility = parseHidden(url.get(`${key}hide`));
  const onSortingChange: OnChangeFn<SortingState> = (updater) => {
    const next = typeof updater === "function" ? updater(sorting) : updater;
    url.set({ [`${key}sort`]: formatSort(next) });
  };
  const onColumnVisibilityChange: OnChangeFn<VisibilityState> = (updater) => {
    const next = typeof updater === "function" ? updater(columnVisibility) : updater;
    url.set({ [`${key}hide`]: formatHidden(next) });
  };
  return { sorting, onSortingChange, columnVisibility, onColumnVisibilityChange };
}

export type TableState = ReturnType<typeof useTableState>;
