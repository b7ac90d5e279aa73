import type { Logger } from "../../logger.js";
import { FreshWork } from "../work/fresh-work.js";

interface Waiting<In, Out> {
  input: In;
  resolve: (outcome: Out) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes that arrive one message at a time, stored many per statement: `write` resolves with its
 * item's outcome once the batch holding it is written. While `concurrency` batches are being
 * written, the next one gathers (up to `batchSize`), so the batches grow with the load and a
 * quiet fleet still writes each item at once. Items with the same `key` never share a batch (a
 * set-based UPDATE takes one row per node); the later waits for the next. A batch that fails is
 * written again item by item, so that only the item at fault fails (an unstorable value must not
 * take the others down with it, now or at each redelivery); each caller handles its own error.
 * Nothing is dropped for waiting: these items are acknowledged JetStream messages' work.
 */
export class BatchWriter<In, Out> {
  private readonly work: FreshWork<Waiting<In, Out>>;

  constructor(
    private readonly options: {
      task: string;
      batchSize: number;
      concurrency: number;
      key: (input: In) => string;
      writeMany: (inputs: In[]) => Promise<Out[]>;
      logger: Logger;
    },
  ) {
    this.work = new FreshWork<Waiting<In, Out>>({
      task: options.task,
      concurrency: options.concurrency,
      batchSize: options.batchSize,
      maxWaitMs: Number.POSITIVE_INFINITY,
      handle: (items) => this.handle(items),
      onDropped: () => undefined,
      logger: options.logger,
    });
  }

  write(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => this.work.push({ input, resolve, reject }));
  }

  /** Resolves once everything queued was written (or failed). */
  drained(): Promise<void> {
    return this.work.drained();
  }

  private async handle(items: Waiting<In, Out>[]): Promise<void> {
    const keys = new Set<string>();
    const now: Waiting<In, Out>[] = [];
    const later: Waiting<In, Out>[] = [];
    for (const item of items) {
      const key = this.options.key(item.input);
      (keys.has(key) ? later : now).push(item);
      keys.add(key);
    }
    try {
      settle(now, await this.options.writeMany(now.map((item) => item.input)));
    } catch (error) {
      if (now.length > 1) {
        for (const item of now) {
          await this.options.writeMany([item.input]).then(
            (outcomes) => settle([item], outcomes),
            (itemError: unknown) => item.reject(itemError),
          );
        }
      } else {
        for (const item of now) item.reject(error);
      }
    }
    if (later.length > 0) await this.handle(later);
  }
}

function settle<In, Out>(items: Waiting<In, Out>[], outcomes: Out[]): void {
  items.forEach((item, index) => {
    const outcome = outcomes[index];
    if (outcome === undefined) item.reject(new Error(`no outcome for item ${index} of ${items.length}`));
    else item.resolve(outcome);
  });
}
