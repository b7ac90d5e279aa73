import type { DurableUpType } from "../protocol/index.js";

/** One durable up message waiting for its JetStream PubAck. */
export interface OutboxRecord {
  /** Position in the outbox, increasing by one per append (gaps only where records were evicted). */
  index: number;
  type: DurableUpType;
  /** Sequence (st, mx) or revision (ack): what the inventory deduplicates on. */
  key: number;
  payload: Uint8Array;
}

export interface OutboxStats {
  records: number;
  bytes: number;
  /** Records dropped to respect the size cap since the outbox was opened. */
  evicted: number;
}

/**
 * Bounded FIFO of status, metrics and ack messages, so that nothing is lost while the link is down.
 * A record leaves only through `ack` (after its PubAck) or through eviction when the cap is hit,
 * oldest metrics first.
 */
export interface Outbox {
  append(type: DurableUpType, key: number, payload: Uint8Array): Promise<void>;
  /** The oldest undelivered records, in order. */
  peek(max: number): Promise<OutboxRecord[]>;
  /** Marks every record up to and including `index` as delivered. */
  ack(index: number): Promise<void>;
  stats(): OutboxStats;
  close(): Promise<void>;
}

/** Serializes async operations: the outbox's state changes one operation at a time. */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.tail.then(operation);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/** In-memory outbox for hollow agents (their "node" is simulated; the wire protocol is real). */
export class MemoryOutbox implements Outbox {
  private records: OutboxRecord[] = [];
  private nextIndex = 0;
  private bytes = 0;
  private evicted = 0;

  constructor(private readonly maxBytes = 256 * 1024) {}

  async append(type: DurableUpType, key: number, payload: Uint8Array): Promise<void> {
    this.records.push({ index: this.nextIndex++, type, key, payload });
    this.bytes += payload.byteLength;
    while (this.bytes > this.maxBytes && this.records.length > 1) {
      const metricsAt = this.records.findIndex((record) => record.type === "mx");
      const [dropped] = this.records.splice(Math.max(metricsAt, 0), 1);
      this.bytes -= dropped?.payload.byteLength ?? 0;
      this.evicted++;
    }
  }

  async peek(max: number): Promise<OutboxRecord[]> {
    return this.records.slice(0, max);
  }

  async ack(index: number): Promise<void> {
    while (this.records.length > 0 && (this.records[0] as OutboxRecord).index <= index) {
      this.bytes -= (this.records.shift() as OutboxRecord).payload.byteLength;
    }
  }

  stats(): OutboxStats {
    return { records: this.records.length, bytes: this.bytes, evicted: this.evicted };
  }

  async close(): Promise<void> {}
}
