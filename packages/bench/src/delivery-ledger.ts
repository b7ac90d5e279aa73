import {
  type DurableUpType,
  decodeMessage,
  type Outbox,
  type OutboxRecord,
  type OutboxStats,
} from "@edgefleet/agent-sdk";

/**
 * What one agent was told was delivered: every status report (its sequence) and metrics report
 * (its sequence and sample time) whose JetStream PubAck it got. The agent removes a record from its
 * outbox only after that PubAck, so this wrapper sees exactly the acknowledged reports; the HA
 * benchmark then looks for each of them in the inventory and in Mimir.
 */
export interface NodeDeliveries {
  nid: string;
  /** Status reports acknowledged, in order: [sequence, report time in ms]. */
  st: Array<[number, number]>;
  /** Metrics reports acknowledged: [sequence, sample time in ms]. */
  mx: Array<[number, number]>;
  /** Records the outbox dropped to keep under its cap (never acknowledged, lost by design). */
  evicted: number;
  /** Records still waiting for their PubAck. */
  pending: number;
}

/** One node's acknowledged reports, kept across restarts of its agent (each gets a new outbox). */
export interface DeliveryLedger {
  st: Array<[number, number]>;
  mx: Array<[number, number]>;
}

export class RecordingOutbox implements Outbox {
  constructor(
    private readonly inner: Outbox,
    private readonly ledger: DeliveryLedger,
  ) {}

  append(type: DurableUpType, key: number, payload: Uint8Array): Promise<void> {
    return this.inner.append(type, key, payload);
  }

  peek(max: number): Promise<OutboxRecord[]> {
    return this.inner.peek(max);
  }

  async ack(index: number): Promise<void> {
    // The agent acknowledges the head of the outbox, one PubAck at a time.
    for (const record of await this.inner.peek(64)) {
      if (record.index > index) break;
      if (record.type === "st") {
        const decoded = decodeMessage("statusReport", record.payload);
        this.ledger.st.push([record.key, decoded.ok ? decoded.msg.at : Number.NaN]);
      } else if (record.type === "mx") {
        const decoded = decodeMessage("metricsReport", record.payload);
        this.ledger.mx.push([record.key, decoded.ok ? decoded.msg.at : Number.NaN]);
      }
    }
    await this.inner.ack(index);
  }

  stats(): OutboxStats {
    return this.inner.stats();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
