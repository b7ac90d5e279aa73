import type { NodeDeliveries } from "../delivery-ledger.js";

/**
 * Exactly-once accounting of the HA benchmark, a pure function of three witnesses that do not
 * share code: what each agent was told was delivered (its PubAcks, delivery-ledger.ts), what the
 * inventory applied (a trigger on node.status_seq, in Postgres), and the samples Mimir holds.
 */

export interface StatusAccount {
  /** Status reports the agents got a PubAck for. */
  acked: number;
  /** … applied to the inventory exactly once. */
  applied: number;
  /**
   * … not applied because a newer report of the same node was applied first (a report is the
   * node's whole state: the older one carries nothing the newer lacks, and is dropped on purpose).
   */
  superseded: number;
  /** … neither applied nor superseded: the inventory is behind what the agent was told it has. */
  lost: number;
  /** Reports applied more than once (the same node and sequence advanced twice). */
  appliedTwice: number;
  /** Applied reports no agent holds a PubAck for (stored while its PubAck was lost, not re-sent). */
  appliedUnacked: number;
}

export interface MetricsAccount {
  /** Metrics reports the agents got a PubAck for. */
  acked: number;
  /** … whose sample (its report's timestamp) is in Mimir. */
  inMimir: number;
  /** … whose sample is not. */
  lost: number;
  /** Samples Mimir holds beyond one per acknowledged report (count_over_time − acked, when positive). */
  duplicated: number;
  /** Samples at timestamps of no acknowledged report. */
  unacked: number;
}

export interface DeliveryAccount {
  nodes: number;
  status: StatusAccount;
  metrics: MetricsAccount;
  /** Reports an agent's outbox dropped at its cap (never sent: lost at the edge by design). */
  evicted: number;
  /** Reports still unacknowledged in the agents' outboxes when they stopped. */
  pending: number;
  /** A few nodes with something lost or doubled, for the log. */
  examples: string[];
}

export interface InventoryFacts {
  /** Per node: the status sequences the inventory applied, in the order applied. */
  statusApplied: ReadonlyMap<string, readonly number[]>;
  /** Per node: the status sequence the inventory holds at the end. */
  finalStatusSeq: ReadonlyMap<string, number>;
  /** Per node: the timestamps (ms) of its CPU samples in Mimir (one sample per metrics report). */
  mimirSamples: ReadonlyMap<string, readonly number[]>;
}

/**
 * `window`: count only the reports made in [from, to) (their own time): what one fault's window
 * lost or doubled. Applied-twice and unacked counts then cover those reports alone too.
 */
export function accountDeliveries(
  deliveries: readonly NodeDeliveries[],
  facts: InventoryFacts,
  window?: { from: number; to: number },
): DeliveryAccount {
  const inWindow = (at: number) => !window || (at >= window.from && at < window.to);
  const status: StatusAccount = {
    acked: 0,
    applied: 0,
    superseded: 0,
    lost: 0,
    appliedTwice: 0,
    appliedUnacked: 0,
  };
  const metrics: MetricsAccount = { acked: 0, inMimir: 0, lost: 0, duplicated: 0, unacked: 0 };
  const examples = new Set<string>();
  let evicted = 0;
  let pending = 0;
  for (const node of deliveries) {
    evicted += node.evicted;
    pending += node.pending;
    const applied = facts.statusApplied.get(node.nid) ?? [];
    const appliedCount = new Map<number, number>();
    for (const seq of applied) appliedCount.set(seq, (appliedCount.get(seq) ?? 0) + 1);
    const final = facts.finalStatusSeq.get(node.nid) ?? 0;
    const ackedAll = new Set(node.st.map(([seq]) => seq));
    const acked = new Set(node.st.filter(([, at]) => inWindow(at)).map(([seq]) => seq));
    status.acked += acked.size;
    for (const seq of acked) {
      if (appliedCount.has(seq)) status.applied++;
      else if (final > seq) status.superseded++;
      else {
        status.lost++;
        examples.add(node.nid);
      }
    }
    for (const [seq, count] of appliedCount) {
      // In a window, only the window's own reports (an unacked one has no known time: whole runs only).
      if (window && !acked.has(seq)) continue;
      if (count > 1) {
        status.appliedTwice++;
        examples.add(node.nid);
      }
      if (!ackedAll.has(seq)) status.appliedUnacked++;
    }

    const samples = (facts.mimirSamples.get(node.nid) ?? []).filter(inWindow);
    const sampleTimes = new Set(samples);
    const ackedTimes = new Set(node.mx.map(([, at]) => at).filter(inWindow));
    metrics.acked += ackedTimes.size;
    for (const at of ackedTimes) {
      if (sampleTimes.has(at)) metrics.inMimir++;
      else {
        metrics.lost++;
        examples.add(node.nid);
      }
    }
    metrics.duplicated += Math.max(0, samples.length - sampleTimes.size);
    for (const at of sampleTimes) if (!ackedTimes.has(at)) metrics.unacked++;
    if (samples.length > sampleTimes.size) examples.add(node.nid);
  }
  return {
    nodes: deliveries.length,
    status,
    metrics,
    evicted,
    pending,
    examples: [...examples].slice(0, 5),
  };
}

/** The accounts of several groups of nodes (the sites) in one, for the totals row. */
export function sumAccounts(accounts: readonly DeliveryAccount[]): DeliveryAccount {
  const total = accountDeliveries([], {
    statusApplied: new Map(),
    finalStatusSeq: new Map(),
    mimirSamples: new Map(),
  });
  for (const account of accounts) {
    total.nodes += account.nodes;
    total.evicted += account.evicted;
    total.pending += account.pending;
    for (const key of Object.keys(total.status) as Array<keyof StatusAccount>)
      total.status[key] += account.status[key];
    for (const key of Object.keys(total.metrics) as Array<keyof MetricsAccount>)
      total.metrics[key] += account.metrics[key];
    total.examples.push(...account.examples);
  }
  total.examples = total.examples.slice(0, 5);
  return total;
}
