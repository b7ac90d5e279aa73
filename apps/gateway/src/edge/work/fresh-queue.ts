/**
 * A FIFO of requests that are only worth answering for a while: `take` hands out the oldest one
 * that has not waited longer than `maxWaitMs`, and drops (and counts) those that have. Pure: the
 * caller says what time it is.
 */
export class FreshQueue<T> {
  private items: Array<{ item: T; at: number }> = [];
  private head = 0;

  constructor(
    readonly maxWaitMs: number,
    private readonly onDropped: (item: T) => void = () => undefined,
  ) {}

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T, now: number): void {
    this.items.push({ item, at: now });
  }

  /** The oldest item still fresh at `now`, or undefined when none is left. */
  take(now: number): T | undefined {
    while (this.head < this.items.length) {
      const next = this.items[this.head] as { item: T; at: number };
      this.items[this.head] = undefined as unknown as { item: T; at: number };
      this.head++;
      this.compact();
      if (now - next.at <= this.maxWaitMs) return next.item;
      this.onDropped(next.item);
    }
    return undefined;
  }

  /** Drops the handed-out head once it is most of the array (amortized O(1) per item). */
  private compact(): void {
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
