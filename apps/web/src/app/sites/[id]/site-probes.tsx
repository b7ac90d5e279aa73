"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { chartTheme } from "~/components/chart-theme";
import { ErrorNotice } from "~/components/error-notice";
import { useTRPC } from "~/trpc/react";
import { megabits } from "../../nodes/[id]/node-probes";

const rateFormat = new Intl.NumberFormat("en", { maximumFractionDigits: 1 });

/**
 * The site's nodes side by side (issue 13): each one's latest throughput to its leaf and to the
 * hub, from the probes operators ran on the node pages. Nodes never probed are listed without bars.
 */
export function SiteProbes(props: { siteId: string }) {
  const trpc = useTRPC();
  const probes = useQuery(trpc.site.probes.queryOptions({ id: props.siteId, perNode: 5 }));
  if (probes.error) return <ErrorNotice error={probes.error} />;
  const nodes = probes.data?.nodes ?? [];
  const rows = nodes
    .filter((node) => node.leafBytesPerSecond !== null || node.hubBytesPerSecond !== null)
    .map((node) => ({
      node: node.nodeName,
      "to leaf": node.leafBytesPerSecond === null ? null : megabits(node.leafBytesPerSecond),
      "to hub": node.hubBytesPerSecond === null ? null : megabits(node.hubBytesPerSecond),
    }));
  return (
    <figure className="m-0 grid min-w-0 gap-2" data-testid="site-probes" data-nodes={rows.length}>
      <figcaption className="text-sm text-muted-foreground">
        Latest throughput probe per node (Mbit/s). Run probes from a node's page.
      </figcaption>
      {rows.length === 0 ? (
        <p className="text-sm text-muted-foreground">No node of this site has been probed yet.</p>
      ) : (
        <ResponsiveContainer width="100%" height={Math.max(160, rows.length * 28 + 60)}>
          <BarChart data={rows} layout="vertical" margin={{ top: 5, right: 10, bottom: 0, left: 0 }}>
            <CartesianGrid {...chartTheme.grid} />
            <XAxis type="number" tickFormatter={(v: number) => rateFormat.format(v)} {...chartTheme.axis} />
            <YAxis type="category" dataKey="node" width={160} {...chartTheme.axis} />
            <Tooltip
              formatter={(value) => `${rateFormat.format(Number(value))} Mbit/s`}
              {...chartTheme.tooltip}
            />
            <Legend wrapperStyle={chartTheme.legend} />
            <Bar dataKey="to leaf" fill={chartTheme.series[0]} isAnimationActive={false} />
            <Bar dataKey="to hub" fill={chartTheme.series[1]} isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
      )}
      {rows.length > 0 ? (
        <ul className="grid gap-1 text-sm">
          {nodes
            .filter((node) => node.probes.length > 0)
            .map((node) => (
              <li key={node.nodeId}>
                <Link href={`/nodes/${node.nodeId}`} className="text-primary hover:underline">
                  {node.nodeName}
                </Link>
                : leaf{" "}
                {node.leafBytesPerSecond === null
                  ? "—"
                  : `${rateFormat.format(megabits(node.leafBytesPerSecond))} Mbit/s`}
                , hub{" "}
                {node.hubBytesPerSecond === null
                  ? "—"
                  : `${rateFormat.format(megabits(node.hubBytesPerSecond))} Mbit/s`}
              </li>
            ))}
        </ul>
      ) : null}
    </figure>
  );
}
