"use client";

import {
  type ColumnDef,
  flexRender,
  getCoreRowModel,
  getSortedRowModel,
  type HeaderContext,
  type OnChangeFn,
  type RowSelectionState,
  useReactTable,
} from "@tanstack/react-table";
import type * as React from "react";
import { cn } from "~/lib/utils";
import { ColumnChooser } from "./column-chooser";
import { ariaSort, SortableHeader } from "./column-header";
import { selectColumn } from "./columns";
import { kebabCase } from "./label-words";
import { onRowKeyDown } from "./use-row-keyboard";
import { useTableState } from "./use-url-state";

/** A column's header unless it brings its own: its title, sorting it on click when it can sort. */
export function titleHeader<Row>({ column }: HeaderContext<Row, unknown>) {
  const meta = column.columnDef.meta as ColumnMeta | undefined;
  return <SortableHeader column={column} title={meta?.title ?? column.id} />;
}

export interface ColumnMeta {
  /** Header text, the column chooser's name, and the label of the value in phone cards. */
  title: string;
  className?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: column value types differ per column, as in TanStack's own examples
export type DataColumn<Row> = ColumnDef<Row, any> & { id: string; meta: ColumnMeta };

/** Cards on phones (each value labelled), a table from md up. */
const responsive = {
  table: "w-full text-sm max-md:block",
  thead: "max-md:absolute max-md:h-px max-md:w-px max-md:overflow-hidden max-md:[clip:rect(0,0,0,0)]",
  tbody: "max-md:grid max-md:gap-2",
  row: "border-b max-md:grid max-md:gap-1 max-md:rounded-lg max-md:border max-md:bg-card max-md:p-3",
  cell: "px-2 py-2 align-middle max-md:flex max-md:min-w-0 max-md:items-baseline max-md:justify-between max-md:gap-4 max-md:p-0 max-md:before:shrink-0 max-md:before:text-muted-foreground max-md:before:content-[attr(data-label)] max-md:[&>*]:min-w-0 max-md:text-right max-md:break-words",
};

/**
 * The console's one table: TanStack Table with sorting, column choice (both kept in the URL under
 * the table's `name`), optional row selection for bulk actions, keyboard navigation between rows, an empty
 * state, and cards instead of columns on phones. The virtualized node list uses the same parts.
 */
export function DataTable<Row>(props: {
  label: string;
  columns: DataColumn<Row>[];
  data: Row[];
  /** How rows are told apart: their `id` unless told. */
  getRowId?: (row: Row) => string;
  /**
   * The table's name on its page: its test id, and the prefix of its view in the address
   * (`<name>.sort`, `<name>.hide`), so a reload or a shared link shows the same sorting and columns.
   * The label in kebab case unless told ("Audit log" → `audit-log`).
   */
  name?: string;
  /** Every row's test id ("app-row"). A row with a `name` also carries it as `data-name`. */
  rowTestId?: string;
  /**
   * More of what tells one row from another in tests, as `data-*` attributes (`{ state: alert.state }`
   * → `data-state`), or another `name` for a row named by some other field.
   */
  rowData?: (row: Row) => RowMarks;
  /** What the table says without rows: the view's EmptyState, made once next to its columns. */
  empty?: React.ReactNode;
  columnChooser?: boolean;
  selection?: { state: RowSelectionState; onChange: OnChangeFn<RowSelectionState> };
  toolbar?: React.ReactNode;
  footer?: React.ReactNode;
  className?: string;
}) {
  const name = props.name ?? kebabCase(props.label);
  const view = useTableState(
    `${name}.`,
    props.columns.map((c) => c.id),
  );
  const getRowId = props.getRowId ?? ((row: Row) => (row as { id: string }).id);
  const select = selectColumn<Row>(`Select all ${props.label.toLowerCase()}`, getRowId);

  const table = useReactTable({
    data: props.data,
    columns: props.selection ? [select, ...props.columns] : props.columns,
    getRowId,
    state: {
      sorting: view.sorting,
      columnVisibility: view.columnVisibility,
      rowSelection: props.selection?.state ?? {},
    },
    enableRowSelection: Boolean(props.selection),
    onRowSelectionChange: props.selection?.onChange,
    onSortingChange: view.onSortingChange,
    onColumnVisibilityChange: view.onColumnVisibilityChange,
    defaultColumn: { header: titleHeader },
    // Nothing to reset (no pagination or expansion), and the automatic resets re-render on every
    // change of `data`: with data built during render that became an endless render loop.
    autoResetAll: false,
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
  });

  const rows = table.getRowModel().rows;
  return (
    <div className={cn("grid min-w-0 gap-2", props.className)}>
      {props.toolbar || props.columnChooser ? (
        <div className="flex flex-wrap items-center justify-end gap-2">
          {props.toolbar}
          {props.columnChooser ? <ColumnChooser table={table} /> : null}
        </div>
      ) : null}
      {rows.length === 0 && props.empty ? (
        props.empty
      ) : (
        <table aria-label={props.label} data-testid={name} className={responsive.table}>
          <thead className={responsive.thead}>
            {table.getHeaderGroups().map((group) => (
              <tr key={group.id} className="border-b">
                {group.headers.map((header) => {
                  const meta = header.column.columnDef.meta as ColumnMeta | undefined;
                  return (
                    <th
                      key={header.id}
                      aria-sort={ariaSort(header.column)}
                      className={cn(
                        "h-10 px-2 text-left align-middle font-medium whitespace-nowrap text-muted-foreground",
                        meta?.className,
                      )}
                    >
                      {flexRender(header.column.columnDef.header, header.getContext())}
                    </th>
                  );
                })}
              </tr>
            ))}
          </thead>
          <tbody className={responsive.tbody} onKeyDown={(event) => onRowKeyDown(event)}>
            {rows.map((row, index) => (
              <tr
                key={row.id}
                data-row
                data-index={index}
                tabIndex={index === 0 ? 0 : -1}
                data-state={row.getIsSelected() ? "selected" : undefined}
                className={cn(
                  responsive.row,
                  "transition-colors outline-none hover:bg-muted/50 focus-visible:bg-accent focus-visible:ring-2 focus-visible:ring-ring/50 data-[state=selected]:bg-muted",
                )}
                data-testid={props.rowTestId}
                {...rowMarks(row.original, props.rowData)}
              >
                {row.getVisibleCells().map((cell) => {
                  const meta = cell.column.columnDef.meta as ColumnMeta | undefined;
                  return (
                    <td
                      key={cell.id}
                      data-label={cell.column.id === "select" ? undefined : meta?.title}
                      className={cn(responsive.cell, meta?.className)}
                    >
                      {flexRender(cell.column.columnDef.cell, cell.getContext())}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {props.footer}
    </div>
  );
}

/** What tells rows apart in tests, each as a `data-<key>` attribute. */
type RowMarks = Record<string, string | number | undefined>;

/**
 * A row's `data-*` marks: its `name` (as `getRowId` reads its `id`; an empty one for a row named
 * null, like the nodes of no site), then what `rowData` adds or replaces;
 * `{ name: "plant-7", nodes: 3 }` → `data-name="plant-7" data-nodes="3"`.
 */
function rowMarks<Row>(row: Row, rowData: ((row: Row) => RowMarks) | undefined) {
  const { name } = row as { name?: unknown };
  const marks = {
    ...(typeof name === "string" || name === null ? { name: name ?? "" } : {}),
    ...rowData?.(row),
  };
  return Object.fromEntries(
    Object.entries(marks).map(([key, value]) => [
      `data-${key}`,
      value === undefined ? undefined : String(value),
    ]),
  );
}
