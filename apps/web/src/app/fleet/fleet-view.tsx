"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "~/trpc/react";
import styles from "./fleet.module.css";
import { StatusCounts } from "./status-counts";

/** Live: the overview refetches every few seconds (three small aggregate queries). */
const REFRESH_MS = 5_000;

export function FleetView() {
  const trpc = useTRPC();
  const live = { refetchInterval: REFRESH_MS };
  const counts = useQuery(trpc.node.counts.queryOptions(undefined, live));
  const sites = useQuery(trpc.site.list.queryOptions(undefined, live));
  const breakdown = useQuery(trpc.node.breakdown.queryOptions(undefined, live));
  const error = counts.error ?? sites.error ?? breakdown.error;

  return (
    <>
      {error ? (
        <p role="alert" className={styles.error}>
          {error.message}
        </p>
      ) : null}
      {counts.data ? <StatusCounts counts={counts.data} /> : <p className={styles.muted}>Loading…</p>}
      <div className={styles.panels}>
        <section className={styles.panel} aria-label="Nodes by site">
          <h2>By site</h2>
          <table className={styles.table} data-testid="sites-table">
            <thead>
              <tr>
                <th>Site</th>
                <th>Nodes</th>
                <th>Online</th>
                <th>Offline</th>
              </tr>
            </thead>
            <tbody>
              {(sites.data ?? []).map((site) => (
                <tr key={site.id ?? "none"}>
                  <td>
                    {site.name ? (
                      <Link href={`/nodes?selector=${encodeURIComponent(`site=${site.name}`)}`}>
                        {site.name}
                      </Link>
                    ) : (
                      <span className={styles.muted}>no site</span>
                    )}
                  </td>
                  <td>{site.total}</td>
                  <td>{site.byStatus.online ?? 0}</td>
                  <td>{site.byStatus.offline ?? 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
        <section className={styles.panel} aria-label="Nodes by agent version">
          <h2>By agent version</h2>
          <table className={styles.table} data-testid="versions-table">
            <thead>
              <tr>
                <th>Agent version</th>
                <th>Nodes</th>
              </tr>
            </thead>
            <tbody>
              {(breakdown.data?.byAgentVersion ?? []).map((row) => (
                <tr key={row.agentVersion ?? "none"}>
                  <td className="mono">{row.agentVersion ?? "never connected"}</td>
                  <td>{row.total}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      </div>
    </>
  );
}
