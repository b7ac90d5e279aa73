"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { NodeCredentialsControl } from "~/components/node-credentials-control";
import { StatusBadge } from "~/components/status-badge";
import { timeAgo } from "~/components/time-ago";
import { LiveIndicator } from "~/trpc/live-indicator";
import { useTRPC } from "~/trpc/react";
import { useFleetLive } from "~/trpc/use-fleet-live";
import styles from "./detail.module.css";
import { LabelsEditor } from "./labels-editor";
import { NodeCharts } from "./node-charts";
import { StatusHistory } from "./status-history";

type Node = RouterOutputs["node"]["byId"];

const when = (date: Date | null) => (date ? `${date.toLocaleString()} (${timeAgo(date)})` : "—");

function Identity({ node }: { node: Node }) {
  const rows: Array<[string, React.ReactNode]> = [
    ["Status", <StatusBadge key="s" status={node.status} />],
    [
      "Degraded",
      node.degradedReasons.length > 0 ? (
        <span key="d" className={styles.degraded} data-testid="degraded-reasons">
          {node.degradedReasons.join("; ")}
        </span>
      ) : (
        "no"
      ),
    ],
    ["Site", node.site?.name ?? "—"],
    ["Agent version", node.agentVersion ?? "—"],
    ["Enrolled", when(node.enrolledAt)],
    ["Last seen", when(node.lastSeenAt)],
    ["Revoked", when(node.revokedAt)],
    ["Desired / applied revision", `${node.desiredRevision} / ${node.appliedRevision}`],
    ["Id", <code key="id">{node.id}</code>],
    ["Public key", node.publicKey ? <code key="pk">{node.publicKey}</code> : "—"],
  ];
  return (
    <dl className={styles.identity}>
      {rows.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function Apps({ node }: { node: Node }) {
  if (node.apps.length === 0) return <p className={styles.muted}>No apps on this node.</p>;
  return (
    <div className={styles.scrollX}>
      <table className={styles.table} data-testid="apps-table">
        <thead>
          <tr>
            <th>App</th>
            <th>Desired</th>
            <th>Running</th>
            <th>State</th>
            <th>Restarts</th>
          </tr>
        </thead>
        <tbody>
          {node.apps.map((app) => (
            <tr key={app.id}>
              <td>{app.app}</td>
              <td className="mono">{app.desiredVersion}</td>
              <td className="mono">{app.observedVersion ?? "—"}</td>
              <td title={app.reason ?? undefined}>{app.state}</td>
              <td>{app.restarts}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function NodeDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // Status changes are pushed (useFleetLive); app states are not, so they are re-read on a timer.
  const node = useQuery(trpc.node.byId.queryOptions({ id }, { refetchInterval: 30_000, retry: false }));
  const live = useFleetLive(
    useCallback(
      () =>
        Promise.all([
          queryClient.invalidateQueries(trpc.node.byId.queryFilter({ id })),
          queryClient.invalidateQueries(trpc.node.statusHistory.pathFilter()),
          queryClient.invalidateQueries(trpc.node.availability.pathFilter()),
        ]),
      [queryClient, trpc, id],
    ),
  );
  if (node.error) {
    return (
      <p role="alert" className={styles.error}>
        {node.error.message}
      </p>
    );
  }
  if (!node.data) return <p className={styles.muted}>Loading…</p>;
  return (
    <div className={styles.layout}>
      <div className={styles.name}>
        <h2 className="mono" data-testid="node-title">
          {node.data.name}
        </h2>
        <LiveIndicator state={live} />
      </div>
      <section className={styles.panel}>
        <h3>Identity</h3>
        <Identity node={node.data} />
      </section>
      <section className={styles.panel}>
        <h3>Labels</h3>
        <LabelsEditor nodeId={node.data.id} labels={node.data.labels} />
      </section>
      <section className={styles.panel}>
        <h3>Credentials</h3>
        <NodeCredentialsControl nodeId={node.data.id} name={node.data.name} status={node.data.status} />
      </section>
      <section className={`${styles.panel} ${styles.full}`}>
        <h3>Status history</h3>
        <StatusHistory nodeId={node.data.id} />
      </section>
      <section className={`${styles.panel} ${styles.full}`}>
        <h3>Apps</h3>
        <Apps node={node.data} />
      </section>
      <section className={`${styles.panel} ${styles.full}`}>
        <h3>Metrics</h3>
        <NodeCharts nodeId={node.data.id} />
      </section>
    </div>
  );
}
