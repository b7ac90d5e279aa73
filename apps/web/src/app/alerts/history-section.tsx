"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useQuery } from "@tanstack/react-query";
import { HistoryIcon } from "lucide-react";
import { stateColumn, timeColumn } from "~/components/data-table/columns";
import type { DataColumn } from "~/components/data-table/data-table";
import { QueryTable } from "~/components/data-table/query-table";
import { Badge } from "~/components/ui/badge";
import { Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { useTRPC } from "~/trpc/react";
import { ALERTS_POLLING, severityVariant } from "./shared";

type Sent = RouterOutputs["alert"]["history"][number];

const DELIVERY_VARIANT = {
  delivered: "online",
  pending: "pending",
  failed: "offline",
  dropped: "outline",
} as const;

const columns: DataColumn<Sent>[] = [
  timeColumn("createdAt", "When", (sent) => sent.createdAt),
  {
    id: "alertStatus",
    accessorFn: (sent) => sent.alertStatus,
    meta: { title: "Alert" },
    cell: ({ row }) => (
      <Badge
        variant={row.original.alertStatus === "firing" ? severityVariant(row.original.severity) : "online"}
      >
        {row.original.alertStatus}
      </Badge>
    ),
  },
  { id: "name", accessorFn: (sent) => sent.name, meta: { title: "Policy" } },
  { id: "summary", accessorFn: (sent) => sent.summary, meta: { title: "Summary" } },
  {
    id: "channel",
    accessorFn: (sent) => `${sent.channelName} (${sent.channelKind})`,
    meta: { title: "Sent to" },
  },
  stateColumn(
    (sent) => ({
      label: sent.state,
      variant: DELIVERY_VARIANT[sent.state as keyof typeof DELIVERY_VARIANT] ?? "outline",
    }),
    "history-state",
    "Delivery",
  ),
];

const nothingSent = (
  <EmptyState icon={<HistoryIcon />} title="Nothing sent yet">
    When an alert fires or resolves, each channel&apos;s notification is listed here.
  </EmptyState>
);

/** Notifications the relay sent or is sending, newest first (kept for the gateway's retention, 30 days by default). */
export function HistorySection() {
  const trpc = useTRPC();
  const history = useQuery(trpc.alert.history.queryOptions({ limit: 100 }, ALERTS_POLLING));
  return (
    <Section title="History" description="The last 100 notifications: one per alert change and channel.">
      <QueryTable
        query={history}
        label="Alert history"
        columns={columns}
        rowTestId="history-row"
        empty={nothingSent}
      />
    </Section>
  );
}
