"use client";

import type { Column } from "@tanstack/react-table";
import { ArrowDownIcon, ArrowUpDownIcon, ArrowUpIcon } from "lucide-react";
import { Button } from "../ui/button";

/** A header that sorts its column on click (ascending, then descending), saying which way it is. */
export function SortableHeader<Row>(props: { column: Column<Row, unknown>; title: string }) {
  const { column } = props;
  if (!column.getCanSort()) return <span>{props.title}</span>;
  const sorted = column.getIsSorted();
  return (
    <Button
      type="button"
      variant="ghost"
      size="sm"
      className="-ml-2 h-8 px-2 text-muted-foreground data-[active=true]:text-foreground"
      data-active={Boolean(sorted)}
      title={`Sort by ${props.title.toLowerCase()}`}
      onClick={() => column.toggleSorting(sorted === "asc")}
    >
      {props.title}
      {sorted === "asc" ? (
        <ArrowUpIcon aria-label="ascending" />
      ) : sorted === "desc" ? (
        <ArrowDownIcon aria-label="descending" />
      ) : (
        <ArrowUpDownIcon aria-hidden className="opacity-50" />
      )}
    </Button>
  );
}

/** What a header cell says to screen readers about its column's sorting (`aria-sort`). */
export function ariaSort<Row>(column: Column<Row, unknown>): "ascending" | "descending" | undefined {
  const sorted = column.getIsSorted();
  return sorted === "asc" ? "ascending" : sorted === "desc" ? "descending" : undefined;
}
