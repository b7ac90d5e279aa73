import { GATEWAY_QUEUE_GROUP, platformUpWildcards, type UpType } from "@edgefleet/agent-sdk/protocol";
import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import { runInBackground } from "../../background.js";
import type { Logger } from "../../logger.js";
import { FreshQueue } from "./fresh-queue.js";

/**
 * Requests from agents handled at most `concurrency` batches of up to `batchSize` at a time
 * (batches: one set-based statement for many requests), oldest first, each dropped
 * unanswered once it has waited longer than `maxWaitMs` (its agent has given up and will ask
 * again). A request service without this starts a handler per message: when a fleet asks at once
 * (a reconnect storm, a batch pulling an artifact) those handlers take every database connection
 * or buffer at once, time out together, and the agents' retries make it worse.
 */
export class FreshWork<T> {
  private readonly waiting: FreshQueue<T>;
  private readonly inFlight = new Set<Promise<void>>();
  private idle: (() => void) | null = null;

  constructor(
    private readonly options: {
      /** The background task's name in logs and `edgefleet_gateway_background_failures_total`. */
      task: string;
      concurrency: number;
      /** Requests handed to one `handle` call at most (1: one at a time). */
      batchSize: number;
      maxWaitMs: number;
      handle: (items: T[]) => Promise<void>;
      onDropped: (item: T) => void;
      logger: Logger;
    },
  ) {
    this.waiting = new FreshQueue<T>(options.maxWaitMs, options.onDropped);
  }

  /** Queues a request that arrived now (take the time on arrival, not when a handler frees up). */
  push(item: T): void {
    this.waiting.push(item, Date.now());
    this.pump();
  }

  /** Resolves once every queued request was handled or dropped as stale. */
  async drained(): Promise<void> {
    if (this.waiting.length === 0 && this.inFlight.size === 0) return;
    await new Promise<void>((resolve) => {
      this.idle = resolve;
    });
  }

  private pump(): void {
    while (this.inFlight.size < this.options.concurrency) {
      const now = Date.now();
      const items: T[] = [];
      for (let item = this.waiting.take(now); item !== undefined; ) {
        items.push(item);
        if (items.length >= this.options.batchSize) break;
        item = this.waiting.take(now);
      }
      if (items.length === 0) break;
      // A failure outside the handler's own catch is logged and counted, never fatal.
      const handled: Promise<void> = runInBackground(this.options.logger, this.options.task, () =>
        this.options.handle(items),
      ).finally(() => {
        this.inFlight.delete(handled);
        this.pump();
      });
      this.inFlight.add(handled);
    }
    if (this.idle && this.waiting.length === 0 && this.inFlight.size === 0) {
      this.idle();
      this.idle = null;
    }
  }
}

/**
 * Subscribes `work` to an up request type on both subject layouts (layout 1: nodes enrolled before
 * site scoping, until they migrate), in the gateways' queue group. A callback, not an iterator:
 * the arrival time is taken on arrival, to drop stale requests.
 */
export function subscribeFresh(
  platform: NatsConnection,
  type: UpType,
  work: FreshWork<Msg>,
  logger: Logger,
): Subscription[] {
  return platformUpWildcards(type).map((wildcard) =>
    platform.subscribe(wildcard, {
      queue: GATEWAY_QUEUE_GROUP,
      callback: (error, msg) => {
        if (error) logger.error({ err: error, type }, "up request subscription failed");
        else work.push(msg);
      },
    }),
  );
}
