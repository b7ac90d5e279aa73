import { useMemo } from "react";

/**
 * What an API list query holds: the array itself, one page (`{ items, nextCursor }`), or the pages
 * a paged (infinite) query has fetched so far (`{ pages: [{ items }, …] }`).
 */
export type ListData<Row> = Row[] | { items: Row[] } | { pages: Array<{ items: Row[] }> };

/** The rows of what an API list returned, pages joined in the order fetched. */
export function listRows<Row>(data: ListData<Row>): Row[] {
  if (Array.isArray(data)) return data;
  if ("pages" in data) return data.pages.flatMap((page) => page.items);
  return data.items;
}

/**
 * The rows of a list query's data, one array per fetched data (not per render): tables and the
 * virtualizer recompute their rows when it changes, and a new array on every render loops them.
 */
export function useListRows<Row>(data: ListData<Row> | undefined): Row[] {
  return useMemo(() => (data === undefined ? [] : listRows(data)), [data]);
}
