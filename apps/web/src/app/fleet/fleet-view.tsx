"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useCallback, useState } from "react";
import { LiveIndicator } from "~/trpc/live-indicator";
import { useTRPC } from "~/trpc/react";
import { useFleetLive } from "~/trpc/use-fleet-live";
import styles from "./fleet.module.css";
import { RecentEvents } from "./recent-events";
import { StatusBar } from "./status-bar";
import { StatusCounts } from "./status-counts";
import { BANDWIDTH_WINDOWS, type BandwidthWindow, TopBandwidth } from "./top-bandwidth";

/**
 * Live without polling: status changes arrive as a server-sent signal (useFleetLive) and refetch
 * the aggregates. What no status change announces (an app failing, bytes moving) is refreshed on
 * a slow timer.
 */
const SLOW_REFRESH_MS = 60_000;

export function FleetView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [bandwidthWindow, setBandwidthWindow] = useState<BandwidthWindow>("24h");
  const slow = { refetchInterval: SLOW_REFRESH_MS };
  const counts = useQuery(trpc.node.counts.queryOptions(undefined, slow));
  const sites = useQuery(trpc.site.list.queryOptions(undefined, slow));
  const breakdown = useQuery(trpc.node.breakdown.queryOptions(undefined, slow));
  const events = useQuery(trpc.fleet.events.queryOptions({ limit: 15 }, slow));
  const bandwidth = useQuery(
    trpc.metrics.topBandwidth.queryOptions(
      { window: bandwidthWindow, limit: 10 },
      { ...slow, placeholderData: (previous) => previous, retry: false },
    ),
  );
  const live = useFleetLive(
    useCallback(
      () =>
        Promise.all([
          queryClient.invalidateQueries(trpc.node.counts.queryFilter()),
          queryClient.invalidateQueries(trpc.node.breakdown.queryFilter()),
          queryClient.invalidateQueries(trpc.site.list.queryFilter()),
          queryClient.invalidateQueries(trpc.fleet.events.queryFilter()),
        ]),
      [queryClient, trpc],
    ),
  );
  const error = counts.error ?? sites.error ?? breakdown.error ?? events.error;

  return (
    <>
      {error ? (
        <p role="alert" className={styles.error}>
          {error.message}
        </p>
      ) : null}
      <div className={styles.summary}>
        {counts.data ? <StatusCounts counts={counts.data} /> : <p className={styles.muted}>Loading…</p>}
        <LiveIndicator state={live} />
      </div>
      {counts.data ? (
        <div className={styles.fleetBar}>
          <StatusBar byStatus={counts.data.byStatus} label="Share of nodes per status" />
        </div>
      ) : null}
      <div className={styles.panels}>
        <section className={styles.panel} aria-label="Recent events">
          <h2>Recent events</h2>
          {events.data ? (
            <RecentEvents events={events.data.items} />
          ) : (
            <p className={styles.muted}>Loading…</p>
          )}
        </section>
        <section className={styles.panel} aria-label="Top bandwidth consumers">
          <div className={styles.panelHead}>
            <h2>Top bandwidth</h2>
            <fieldset className={styles.ranges} aria-label="Bandwidth window">
              {BANDWIDTH_WINDOWS.map((window) => (
                <button
                  key={window}
                  type="button"
                  aria-pressed={bandwidthWindow === window}
                  className={bandwidthWindow === window ? styles.activeRange : undefined}
                  onClick={() => setBandwidthWindow(window)}
                >
                  {window}
                </button>
              ))}
            </fieldset>
          </div>
          {bandwidth.error ? (
            <p role="alert" className={styles.error}>
              {bandwidth.error.message}
            </p>
          ) : bandwidth.data ? (
            <TopBandwidth data={bandwidth.data} />
          ) : (
            <p className={styles.muted}>Loading…</p>
          )}
        </section>
        <section className={styles.panel} aria-label="Nodes by site">
          <h2>By site</h2>
          <div className={styles.scrollX}>
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
                      <StatusBar
                        byStatus={site.byStatus}
                        label={`Status shares in ${site.name ?? "no site"}`}
                      />
                    </td>
                    <td>{site.total}</td>
                    <td>{site.byStatus.online ?? 0}</td>
                    <td>{site.byStatus.offline ?? 0}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
        <section className={styles.panel} aria-label="Nodes by agent version">
          <h2>By agent version</h2>
          <div className={styles.scrollX}>
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
          </div>
        </section>
      </div>
    </>
  );
}
