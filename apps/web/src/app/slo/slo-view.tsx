"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { QueryContent } from "~/components/query-content";
import { Segmented } from "~/components/segmented";
import { Section } from "~/components/ui/card";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "~/components/ui/table";
import { cn } from "~/lib/utils";
import { useTRPC } from "~/trpc/react";
import { formatBytes } from "../fleet/top-bandwidth";

type Slo = RouterOutputs["metrics"]["slo"];
type Indicator = Slo["indicators"][number];
type SloWindow = Slo["window"];

const WINDOWS: Array<{ value: SloWindow; label: string }> = [
  { value: "1h", label: "1 h" },
  { value: "6h", label: "6 h" },
  { value: "24h", label: "24 h" },
  { value: "7d", label: "7 d" },
];

/** What each indicator measures, in the organization's own words. */
const INDICATORS: Record<Indicator["key"], { name: string; what: string; eventsLabel: string }> = {
  apiP99: {
    name: "API latency, p99",
    what: "Console and REST calls of this organization, as the API server timed them.",
    eventsLabel: "calls",
  },
  desiredToRunningP99: {
    name: "Desired → running, p99",
    what: "From a desired version committed to the agent reporting the app running on it.",
    eventsLabel: "app instances",
  },
  connectToOnlineP99: {
    name: "Connected → online, p99",
    what: "From an agent's hello answered to the node shown online.",
    eventsLabel: "connects",
  },
  bytesPerNodePerMonth: {
    name: "Control traffic per node, per month",
    what: "What the agents sent over the control link, averaged per node, at this window's rate.",
    eventsLabel: "",
  },
};

function formatValue(value: number, unit: Indicator["unit"]): string {
  if (unit === "bytes") return formatBytes(value);
  return value < 1
    ? `${Math.round(value * 1000)} ms`
    : `${value.toLocaleString("en", { maximumFractionDigits: 2 })} s`;
}

function Verdict({ indicator }: { indicator: Indicator }) {
  const [label, className] =
    indicator.met === null
      ? ["no data", "text-muted-foreground"]
      : indicator.met
        ? ["met", "text-online"]
        : ["missed", "text-destructive"];
  return (
    <span data-testid={`slo-verdict-${indicator.key}`} className={cn("font-medium", className)}>
      {label}
    </span>
  );
}

export function SloView() {
  const trpc = useTRPC();
  const [window, setWindow] = useState<SloWindow>("1h");
  const slo = useQuery(
    trpc.metrics.slo.queryOptions(
      { window },
      { refetchInterval: 60_000, placeholderData: (previous) => previous, retry: false },
    ),
  );
  return (
    <Section
      title="Service level indicators"
      description="Measured from the series the API server and the gateway write for this organization."
      actions={<Segmented label="Window" options={WINDOWS} value={window} onChange={setWindow} />}
    >
      <QueryContent query={slo} loading="Loading service levels">
        {(data) => (
          <Table aria-label="Service level indicators and their objectives">
            <TableHeader>
              <TableRow>
                <TableHead>Indicator</TableHead>
                <TableHead className="text-right">Measured</TableHead>
                <TableHead className="text-right">Objective</TableHead>
                <TableHead>Verdict</TableHead>
              </TableRow>
            </TableHeader>
            <TableBody>
              {data.indicators.map((indicator) => {
                const info = INDICATORS[indicator.key];
                return (
                  <TableRow key={indicator.key} data-testid={`slo-${indicator.key}`}>
                    <TableCell className="whitespace-normal">
                      <span className="grid gap-0.5">
                        <span className="font-medium">{info.name}</span>
                        <span className="text-xs text-muted-foreground">
                          {info.what}
                          {indicator.events !== null && info.eventsLabel
                            ? ` ${indicator.events.toLocaleString("en")} ${info.eventsLabel} in ${data.window}.`
                            : ""}
                        </span>
                      </span>
                    </TableCell>
                    <TableCell className="text-right tabular-nums" data-testid={`slo-value-${indicator.key}`}>
                      {indicator.value === null ? "—" : formatValue(indicator.value, indicator.unit)}
                    </TableCell>
                    <TableCell className="text-right tabular-nums">
                      ≤ {formatValue(indicator.objective, indicator.unit)}
                    </TableCell>
                    <TableCell>
                      <Verdict indicator={indicator} />
                    </TableCell>
                  </TableRow>
                );
              })}
            </TableBody>
          </Table>
        )}
      </QueryContent>
    </Section>
  );
}
