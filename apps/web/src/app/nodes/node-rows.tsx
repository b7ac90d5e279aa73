"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useVirtualizer } from "@tanstack/react-virtual";
import Link from "next/link";
import { useEffect, useRef } from "react";
import { StatusBadge } from "~/components/status-badge";
import { timeAgo } from "~/components/time-ago";
import styles from "./nodes.module.css";

type NodeRow = RouterOutputs["node"]["list"]["items"][number];
export type NodeSort = {
  field: "name" | "status" | "lastSeenAt" | "agentVersion";
  direction: "asc" | "desc";
};

const ROW_HEIGHT = 44;

function SortHeader(props: {
  field: NodeSort["field"];
  label: string;
  sort: NodeSort;
  onSort: (s: NodeSort) => void;
}) {
  const active = props.sort.field === props.field;
  const next: NodeSort = {
    field: props.field,
    direction: active && props.sort.direction === "asc" ? "desc" : "asc",
  };
  return (
    <button
      type="button"
      className={styles.sortButton}
      title={`Sort by ${props.label.toLowerCase()}`}
      onClick={() => props.onSort(next)}
    >
      {props.label} {active ? (props.sort.direction === "asc" ? "▲" : "▼") : ""}
    </button>
  );
}

/**
 * Only the rows in view are in the DOM (100,000 nodes scroll like 20); reaching the end of the
 * loaded rows fetches the next cursor page.
 */
export function NodeRows(props: {
  nodes: NodeRow[];
  sort: NodeSort;
  onSort: (sort: NodeSort) => void;
  selected: ReadonlySet<string>;
  onSelect: (selected: ReadonlySet<string>) => void;
  hasMore: boolean;
  loadMore: () => void;
}) {
  const { nodes, hasMore, loadMore } = props;
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: hasMore ? nodes.length + 1 : nodes.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const virtualRows = virtualizer.getVirtualItems();
  const lastIndex = virtualRows.at(-1)?.index ?? -1;

  useEffect(() => {
    if (hasMore && lastIndex >= nodes.length - 1) loadMore();
  }, [hasMore, lastIndex, nodes.length, loadMore]);

  const toggle = (id: string) => {
    const next = new Set(props.selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    props.onSelect(next);
  };
  const allSelected = nodes.length > 0 && nodes.every((n) => props.selected.has(n.id));

  return (
    <section className={styles.grid} aria-label="Nodes" data-testid="node-table">
      <div className={`${styles.row} ${styles.head}`}>
        <span>
          <input
            type="checkbox"
            aria-label="Select all loaded nodes"
            checked={allSelected}
            onChange={() => props.onSelect(allSelected ? new Set() : new Set(nodes.map((n) => n.id)))}
          />
        </span>
        <span>
          <SortHeader field="name" label="Name" sort={props.sort} onSort={props.onSort} />
        </span>
        <span className={styles.wide}>Site</span>
        <span>
          <SortHeader field="status" label="Status" sort={props.sort} onSort={props.onSort} />
        </span>
        <span className={styles.wide}>Labels</span>
        <span className={styles.wide}>
          <SortHeader field="agentVersion" label="Agent" sort={props.sort} onSort={props.onSort} />
        </span>
        <span className={styles.wide}>
          <SortHeader field="lastSeenAt" label="Last seen" sort={props.sort} onSort={props.onSort} />
        </span>
      </div>
      {nodes.length === 0 ? <p className={styles.muted}>No nodes match.</p> : null}
      <div ref={scrollRef} className={styles.scroller}>
        <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
          {virtualRows.map((virtualRow) => {
            const node = nodes[virtualRow.index];
            const style = { transform: `translateY(${virtualRow.start}px)`, height: virtualRow.size };
            if (!node) {
              return (
                <div key="loader" className={`${styles.row} ${styles.virtual}`} style={style}>
                  <span className={styles.muted}>Loading more…</span>
                </div>
              );
            }
            return (
              <div key={node.id} className={`${styles.row} ${styles.virtual}`} style={style}>
                <span>
                  <input
                    type="checkbox"
                    aria-label={`Select ${node.name}`}
                    checked={props.selected.has(node.id)}
                    onChange={() => toggle(node.id)}
                  />
                </span>
                <span className="mono">
                  <Link href={`/nodes/${node.id}`} data-testid="node-name">
                    {node.name}
                  </Link>
                </span>
                <span className={styles.wide}>{node.site ?? "—"}</span>
                <span>
                  <StatusBadge status={node.status} />
                </span>
                <span className={`${styles.wide} ${styles.labels}`}>
                  {Object.entries(node.labels).map(([key, value]) => (
                    <span key={key} className={styles.label}>
                      {key}={value}
                    </span>
                  ))}
                </span>
                <span className={`${styles.wide} mono`}>{node.agentVersion ?? "—"}</span>
                <span className={styles.wide} title={node.lastSeenAt?.toISOString()}>
                  {timeAgo(node.lastSeenAt)}
                </span>
              </div>
            );
          })}
        </div>
      </div>
    </section>
  );
}
