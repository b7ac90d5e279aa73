import type { VariantProps } from "class-variance-authority";
import Link from "next/link";
import type * as React from "react";
import { cn } from "~/lib/utils";
import { LabelList } from "../label-list";
import { RelativeTime } from "../relative-time";
import { Badge, type badgeVariants } from "../ui/badge";
import { Checkbox } from "../ui/checkbox";
import type { DataColumn } from "./data-table";

/** Column makers for what several tables show the same way. */

type BadgeVariant = NonNullable<VariantProps<typeof badgeVariants>["variant"]>;

/** A state as a coloured badge, sorted by its label. */
export function stateColumn<Row>(
  state: (row: Row) => { label: string; variant: BadgeVariant },
  testId?: string,
  title = "State",
): DataColumn<Row> {
  return {
    id: "state",
    accessorFn: (row) => state(row).label,
    meta: { title },
    cell: ({ row }) => {
      const { label, variant } = state(row.original);
      return (
        <Badge variant={variant} data-testid={testId}>
          {label}
        </Badge>
      );
    },
  };
}

/**
 * A text, sorted by it, or a muted word where there is none (`none`: "—" unless told, e.g.
 * "everywhere" for a scope that names nothing).
 */
export function textColumn<Row>(
  id: string,
  title: string,
  text: (row: Row) => string | null | undefined,
  options: { none?: string; className?: string } = {},
): DataColumn<Row> {
  return {
    id,
    accessorFn: (row) => text(row) ?? "",
    meta: { title, className: options.className },
    cell: ({ getValue }) =>
      (getValue() as string) || <span className="text-muted-foreground">{options.none ?? "—"}</span>,
  };
}

/** A row's name in medium weight, sorted by it: the first column of things without a page of their own. */
export function nameColumn<Row extends { name: string }>(title: string): DataColumn<Row> {
  return {
    id: "name",
    accessorFn: (row) => row.name,
    meta: { title },
    cell: ({ row }) => <span className="font-medium">{row.original.name}</span>,
  };
}

/**
 * A row's name as the link to its page (a node, site, app, rollout), sorted by the name; a row
 * without a page shows `none` muted. `testId` names the link for tests.
 */
export function linkColumn<Row>(
  id: string,
  title: string,
  link: (row: Row) => { text: string; href: string } | null,
  options: { className?: string; testId?: string; none?: string } = {},
): DataColumn<Row> {
  return {
    id,
    accessorFn: (row) => link(row)?.text ?? "",
    meta: { title },
    cell: ({ row }) => {
      const to = link(row.original);
      return to ? (
        <Link
          href={to.href}
          className={cn("text-primary hover:underline", options.className)}
          data-testid={options.testId}
        >
          {to.text}
        </Link>
      ) : (
        <span className="text-muted-foreground">{options.none ?? "—"}</span>
      );
    },
  };
}

/** A moment shown relative to now ("3 minutes ago"), sorted by time; no date sorts first. */
export function timeColumn<Row>(id: string, title: string, date: (row: Row) => Date | null): DataColumn<Row> {
  return {
    id,
    accessorFn: (row) => date(row)?.getTime() ?? 0,
    meta: { title },
    cell: ({ row }) => <RelativeTime date={date(row.original)} />,
  };
}

export function labelsColumn<Row>(labels: (row: Row) => Record<string, string>): DataColumn<Row> {
  return {
    id: "labels",
    enableSorting: false,
    meta: { title: "Labels" },
    cell: ({ row }) => <LabelList labels={labels(row.original)} />,
  };
}

/** The row's buttons: never sorted or hidden, its header read by screen readers only. */
export function actionsColumn<Row>(cell: (row: Row) => React.ReactNode): DataColumn<Row> {
  return {
    id: "actions",
    enableSorting: false,
    enableHiding: false,
    meta: { title: "Actions" },
    header: () => <span className="sr-only">Actions</span>,
    cell: ({ row }) => cell(row.original),
  };
}

/**
 * The selection checkboxes of a table with bulk actions: one in the header for all rows (`all`
 * names it), one per row, named by `name`. Rows are reached by the keyboard, not the boxes (Space
 * toggles the focused row's), so the row's box is not a tab stop of its own.
 */
export function selectColumn<Row>(all: string, name: (row: Row) => string): DataColumn<Row> {
  return {
    id: "select",
    enableSorting: false,
    enableHiding: false,
    meta: { title: "Select" },
    header: ({ table }) => (
      <Checkbox
        aria-label={all}
        checked={
          table.getIsAllRowsSelected() ? true : table.getIsSomeRowsSelected() ? "indeterminate" : false
        }
        onCheckedChange={(checked) => table.toggleAllRowsSelected(checked === true)}
      />
    ),
    cell: ({ row }) => (
      <Checkbox
        aria-label={`Select ${name(row.original)}`}
        checked={row.getIsSelected()}
        onCheckedChange={(checked) => row.toggleSelected(checked === true)}
        tabIndex={-1}
      />
    ),
  };
}
