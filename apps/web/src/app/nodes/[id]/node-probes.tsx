"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { GaugeIcon } from "lucide-react";
import { ActionButton } from "~/components/action-button";
import { ErrorNotice } from "~/components/error-notice";
import { useTRPC } from "~/trpc/react";
import { TimeChart } from "./time-chart";

const rateFormat = new Intl.NumberFormat("en", { maximumFractionDigits: 1 });

/** Bytes per second as megabits per second (how links are sold). */
export function megabits(bytesPerSecond: number): number {
  return (bytesPerSecond * 8) / 1_000_000;
}

/**
 * Throughput probes of one node (issue 13): run one to the leaf or the hub (operators; bounded to
 * 1 MiB and 5 s), and the results over time, per target.
 */
export function NodeProbes(props: { nodeId: string; status: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const probes = useQuery(trpc.node.probes.queryOptions({ id: props.nodeId, limit: 50 }));
  const run = useMutation(
    trpc.node.probe.mutationOptions({
      onSettled: () => queryClient.invalidateQueries(trpc.node.probes.queryFilter({ id: props.nodeId })),
    }),
  );
  const offline = props.status !== "online";
  const rows = probes.data ?? [];
  const series = (["leaf", "hub"] as const).map((target) => ({
    name: `to ${target}`,
    points: rows
      .filter((probe) => probe.ok && probe.target === target)
      .map((probe): [number, number] => [probe.createdAt.getTime(), megabits(probe.bytesPerSecond)])
      .reverse(),
  }));
  const latest = rows[0];
  return (
    <div className="grid gap-3" data-testid="node-probes">
      <div className="flex flex-wrap items-center gap-2">
        {(["leaf", "hub"] as const).map((target) => (
          <ActionButton
            key={target}
            pending={run.isPending}
            disabledReason={offline ? `The node is ${props.status}: probes run on online nodes only.` : null}
            onClick={() => run.mutate({ id: props.nodeId, target })}
          >
            <GaugeIcon aria-hidden />
            {run.isPending && run.variables?.target === target ? "Probing…" : `Probe to ${target}`}
          </ActionButton>
        ))}
        {latest ? (
          <span className="text-sm text-muted-foreground" data-testid="latest-probe">
            Latest: {latest.target}{" "}
            {latest.ok
              ? `${rateFormat.format(megabits(latest.bytesPerSecond))} Mbit/s (${latest.bytes} bytes in ${latest.durationMs} ms)`
              : `failed: ${latest.error ?? latest.code}`}
          </span>
        ) : null}
      </div>
      {run.error ? <ErrorNotice error={run.error} /> : null}
      {probes.error ? <ErrorNotice error={probes.error} /> : null}
      <TimeChart title="Throughput probes" unit="Mbit/s" testId="probe-chart" series={series} />
    </div>
  );
}
