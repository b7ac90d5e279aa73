import { GATEWAY_QUEUE_GROUP, platformUpWildcards } from "@edgefleet/agent-sdk/protocol";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { runInBackground } from "../../background.js";
import type { Logger } from "../../logger.js";
import type { EdgeMetrics } from "../edge-metrics.js";
import { type IntakeDeps, intakeUpMessage } from "../intake.js";
import type { EdgeService } from "../service.js";
import type { HeartbeatBatcher } from "./heartbeat-batcher.js";
import type { OfflineSweeper } from "./offline-sweeper.js";

/** Heartbeats (`ef.t.*.up.*.*.hb` and layout 1's `ef.t.*.up.*.hb`, queue group `gateway`) into the batcher; runs the sweeper. */
export class HeartbeatService implements EdgeService {
  readonly name = "liveness";
  private subscriptions: Subscription[] = [];
  private loops: Promise<void>[] = [];

  constructor(
    private readonly intake: IntakeDeps,
    private readonly batcher: HeartbeatBatcher,
    private readonly sweeper: OfflineSweeper,
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
  ) {}

  async start(platform: NatsConnection): Promise<void> {
    this.batcher.start();
    this.sweeper.start();
    for (const wildcard of platformUpWildcards("hb")) {
      const subscription = platform.subscribe(wildcard, { queue: GATEWAY_QUEUE_GROUP });
      this.subscriptions.push(subscription);
      this.loops.push(
        (async () => {
          // Not awaited per message: concurrent lookups of unknown nodes share one query (reconnect storms).
          for await (const msg of subscription)
            void runInBackground(this.logger, "heartbeat", () => this.handle(msg.subject, msg.data));
        })(),
      );
    }
  }

  private async handle(subject: string, data: Uint8Array): Promise<void> {
    try {
      const taken = await intakeUpMessage(this.intake, subject, data, "hb", "heartbeat");
      if (!taken) return;
      this.metrics.accepted.inc({ type: "hb" });
      this.batcher.see(taken.node.id);
    } catch (error) {
      this.logger.error({ err: error, subject }, "heartbeat handling failed");
    }
  }

  async stop(): Promise<void> {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions = [];
    await Promise.all(this.loops);
    await this.sweeper.stop();
    await this.batcher.stop();
  }
}
