"use client";

import type { RouterOutputs } from "@edgefleet/api";
import {
  flexRender,
  getCoreRowModel,
  type OnChangeFn,
  type RowSelectionState,
  useReactTable,
} from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { ServerIcon } from "lucide-react";
import Link from "next/link";
import { type CSSProperties, useEffect, useRef, useState } from "react";
import { ColumnChooser } from "~/components/data-table/column-chooser";
import { ariaSort } from "~/components/data-table/column-header";
import { selectColumn } from "~/components/data-table/columns";
import { type ColumnMeta, type DataColumn, titleHeader } from "~/components/data-table/data-table";
import { onRowKeyDown } from "~/components/data-table/use-row-keyboard";
import type { TableState } from "~/components/data-table/use-url-state";
import { LabelList } from "~/components/label-list";
import { RelativeTime } from "~/components/relative-time";
import { StatusBadge } from "~/components/status-badge";
import { EmptyState } from "~/components/ui/empty-state";
import { cn } from "~/lib/utils";

export type NodeRow = RouterOutputs["node"]["list"]["items"][number];

/** Grid track of each column from md up, and on phones (390 px; false: not shown there). */
type NodeColumnMeta = ColumnMeta & { track: string; phone: string | false };

const ROW_HEIGHT = 44;

const columns: Array<DataColumn<NodeRow> & { meta: NodeColumnMeta }> = [
  {
    ...selectColumn<NodeRow>("Select all loaded nodes", (node) => node.name),
    meta: { title: "Select", track: "2.25rem", phone: "1.25rem" },
  },
  {
    id: "name",
    enableHiding: false,
    meta: { title: "Name", track: "minmax(9rem,1.4fr)", phone: "minmax(0,1fr)" },
    cell: ({ row }) => (
      <Link
        href={`/nodes/${row.original.id}`}
        data-testid="node-name"
        tabIndex={-1}
        className="truncate font-mono text-primary hover:underline"
      >
        {row.original.name}
      </Link>
    ),
  },
  {
    id: "site",
    enableSorting: false,
    meta: { title: "Site", track: "minmax(6rem,0.8fr)", phone: false },
    cell: ({ row }) => row.original.site ?? <span className="text-muted-foreground">—</span>,
  },
  {
    id: "status",
    meta: { title: "Status", track: "6rem", phone: "4.75rem" },
    cell: ({ row }) => <StatusBadge status={row.original.status} />,
  },
  {
    id: "labels",
    enableSorting: false,
    meta: { title: "Labels", track: "minmax(8rem,1.6fr)", phone: false },
    cell: ({ row }) => <LabelList labels={row.original.labels} className="max-h-6 overflow-hidden" />,
  },
  {
    id: "agentVersion",
    meta: { title: "Agent", track: "minmax(5rem,0.6fr)", phone: false },
    cell: ({ row }) => <span className="font-mono">{row.original.agentVersion ?? "—"}</span>,
  },
  {
    id: "lastSeenAt",
    meta: { title: "Last seen", track: "minmax(6.5rem,0.7fr)", phone: "6.25rem" },
    cell: ({ row }) => <RelativeTime date={row.original.lastSeenAt} className="text-muted-foreground" />,
  },
];

export const NODE_COLUMN_IDS = columns.map((c) => c.id);

/**
 * The node list: TanStack Table for columns, sorting (done by the server: `sort` goes to
 * node.list) and selection, and only the rows in view in the DOM (100,000 nodes scroll like 20);
 * reaching the end of the loaded rows fetches the next cursor page.
 */
export function NodeTable(props: {
  nodes: NodeRow[];
  /** Sorting and shown columns, from the address (`useTableState`). */
  view: TableState;
  selection: RowSelectionState;
  onSelectionChange: OnChangeFn<RowSelectionState>;
  hasMore: boolean;
  loadMore: () => void;
  toolbar?: React.ReactNode;
  filtered: boolean;
}) {
  const { nodes, hasMore, loadMore } = props;
  const table = useReactTable({
    data: nodes,
    columns,
    getRowId: (node) => node.id,
    state: {
      sorting: props.view.sorting,
      columnVisibility: props.view.columnVisibility,
      rowSelection: props.selection,
    },
    manualSorting: true,
    enableSortingRemoval: false,
    enableRowSelection: true,
    onSortingChange: props.view.onSortingChange,
    onColumnVisibilityChange: props.view.onColumnVisibilityChange,
    onRowSelectionChange: props.onSelectionChange,
    defaultColumn: { header: titleHeader },
    // No pagination to reset; the automatic resets re-render on every new page of rows.
    autoResetAll: false,
    getCoreRowModel: getCoreRowModel(),
  });
  const scrollRef = useRef<HTMLDivElement>(null);
  const [active, setActive] = useState(0);
  const rows = table.getRowModel().rows;
  const virtualizer = useVirtualizer({
    count: hasMore ? rows.length + 1 : rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const virtualRows = virtualizer.getVirtualItems();
  const lastIndex = virtualRows.at(-1)?.index ?? -1;

  useEffect(() => {
    if (hasMore && lastIndex >= nodes.length - 1) loadMore();
  }, [hasMore, lastIndex, nodes.length, loadMore]);

  const visible = table.getVisibleLeafColumns();
  const tracks = (phone: boolean) =>
    visible
      .map((column) => column.columnDef.meta as NodeColumnMeta)
      .flatMap((meta) => (!phone ? [meta.track] : meta.phone ? [meta.phone] : []))
      .join(" ");
  const grid = { "--cols": tracks(false), "--cols-phone": tracks(true) } as CSSProperties;
  const cellClass = (meta: NodeColumnMeta) => cn("flex min-w-0 items-center", !meta.phone && "max-md:hidden");
  const rowClass = "grid grid-cols-(--cols-phone) items-center gap-2 px-2 md:grid-cols-(--cols)";

  return (
    <div className="grid min-w-0 gap-2">
      <div className="flex flex-wrap items-center justify-end gap-2">
        {props.toolbar}
        <ColumnChooser table={table} />
      </div>
      {nodes.length === 0 ? (
        <EmptyState icon={<ServerIcon />} title={props.filtered ? "No nodes match." : "No nodes yet"}>
          {props.filtered
            ? "Change the selector, search or status above; the selector's syntax is key=value, key!=value, key in (a,b), !key."
            : "Nodes appear here once they enroll. Create an enrollment token to add the first one."}
        </EmptyState>
      ) : (
        // Real table elements laid out as a grid: only the rows in view exist, positioned by the
        // virtualizer inside a body as tall as all rows (TanStack Virtual's table pattern).
        <div
          ref={scrollRef}
          className="h-[min(70vh,44rem)] min-w-0 overflow-y-auto overscroll-contain rounded-lg border text-sm"
        >
          <table
            aria-label="Nodes"
            aria-rowcount={hasMore ? -1 : rows.length + 1}
            data-testid="node-table"
            className="grid"
            style={grid}
          >
            <thead className="sticky top-0 z-10 grid border-b bg-muted">
              {table.getHeaderGroups().map((group) => (
                <tr aria-rowindex={1} key={group.id} className={cn(rowClass, "h-10")}>
                  {group.headers.map((header) => {
                    const meta = header.column.columnDef.meta as NodeColumnMeta;
                    return (
                      <th
                        key={header.id}
                        aria-sort={ariaSort(header.column)}
                        className={cn(cellClass(meta), "text-left font-medium text-muted-foreground")}
                      >
                        {flexRender(header.column.columnDef.header, header.getContext())}
                      </th>
                    );
                  })}
                </tr>
              ))}
            </thead>
            <tbody
              className="relative grid"
              style={{ height: virtualizer.getTotalSize() }}
              onKeyDown={(event) =>
                onRowKeyDown(event, (index) => {
                  setActive(index);
                  virtualizer.scrollToIndex(index);
                })
              }
            >
              {virtualRows.map((virtualRow) => {
                const row = rows[virtualRow.index];
                const style: CSSProperties = {
                  position: "absolute",
                  top: 0,
                  left: 0,
                  width: "100%",
                  transform: `translateY(${virtualRow.start}px)`,
                  height: virtualRow.size,
                };
                if (!row) {
                  return (
                    <tr key="loader" style={style} className={rowClass}>
                      <td className="col-span-full text-muted-foreground">Loading more…</td>
                    </tr>
                  );
                }
                return (
                  <tr
                    key={row.id}
                    aria-rowindex={virtualRow.index + 2}
                    data-row
                    data-index={virtualRow.index}
                    data-state={row.getIsSelected() ? "selected" : undefined}
                    tabIndex={virtualRow.index === active ? 0 : -1}
                    style={style}
                    className={cn(
                      rowClass,
                      "border-b outline-none hover:bg-muted/50 focus-visible:bg-accent focus-visible:ring-2 focus-visible:ring-ring/50 focus-visible:ring-inset data-[state=selected]:bg-muted",
                    )}
                  >
                    {row.getVisibleCells().map((cell) => (
                      <td key={cell.id} className={cellClass(cell.column.columnDef.meta as NodeColumnMeta)}>
                        {flexRender(cell.column.columnDef.cell, cell.getContext())}
                      </td>
                    ))}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
