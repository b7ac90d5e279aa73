import type { ControlMessageType } from "../protocol/index.js";

/** Control-plane bytes (subject + headers + payload) sent and received per message type. */
export class ControlBytes {
  private readonly counts = new Map<ControlMessageType, [number, number]>();

  sent(type: ControlMessageType, bytes: number): void {
    this.entry(type)[0] += bytes;
  }

  received(type: ControlMessageType, bytes: number): void {
    this.entry(type)[1] += bytes;
  }

  /** `{ type: [sent, received] }` for the types seen so far (MetricsReport.ctl). */
  snapshot(): Partial<Record<ControlMessageType, [number, number]>> {
    const snapshot: Partial<Record<ControlMessageType, [number, number]>> = {};
    for (const [type, [sent, received]] of this.counts) snapshot[type] = [sent, received];
    return snapshot;
  }

  private entry(type: ControlMessageType): [number, number] {
    let entry = this.counts.get(type);
    if (!entry) {
      entry = [0, 0];
      this.counts.set(type, entry);
    }
    return entry;
  }
}
