import type { VariantProps } from "class-variance-authority";
import type * as React from "react";
import { LabelList } from "../label-list";
import { RelativeTime } from "../relative-time";
import { Badge, type badgeVariants } from "../ui/badge";
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
