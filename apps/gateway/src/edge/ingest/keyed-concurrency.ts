/**
 * Runs tasks concurrently, at most `limit` at once, but one at a time per key, in submission
 * order: a node's up messages are handled in the order they arrived (its status sequence, acks),
 * while different nodes' messages no longer wait for each other.
 */
export class KeyedConcurrency {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new Error(`limit must be a positive integer, got ${limit}`);
  }

  /** Resolves once the task is admitted (started or queued behind its key); the task's own errors are its business. */
  async submit(key: string, task: () => Promise<void>): Promise<void> {
    while (this.running.size >= this.limit) await Promise.race(this.running);
    const previous = this.tails.get(key) ?? Promise.resolve();
    const run: Promise<void> = previous.then(task).catch(() => undefined);
    this.tails.set(key, run);
    this.running.add(run);
    void run.finally(() => {
      this.running.delete(run);
      if (this.tails.get(key) === run) this.tails.delete(key);
    });
  }

  /** Tasks running or queued behind their key. */
  get size(): number {
    return this.running.size;
  }

  /** Resolves when every submitted task has finished. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }
}
