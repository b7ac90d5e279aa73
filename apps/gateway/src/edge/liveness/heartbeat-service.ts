import { GATEWAY_QUEUE_GROUP, platformUpWildcard } from "@edgefleet/agent-sdk/protocol";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { runInBackground } from "../../background.js";
import type { Logger } from "../../logger.js";
import type { EdgeMetrics } from "../edge-metrics.js";
import { type IntakeDeps, intakeUpMessage } from "../intake.js";
import type { EdgeService } from "../service.js";
import type { HeartbeatBatcher } from "./heartbeat-batcher.js";
import type { OfflineSweeper } from "./offline-sweeper.js";

/** Heartbeats (`ef.t.*.up.*.hb`, queue group `gateway`) into the batcher; runs the sweeper. */
export class HeartbeatService implements EdgeService {
  readonly name = "liveness";
  private subscription: Subscription | null = null;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly intake: IntakeDeps,
    private readonly batcher: HeartbeatBatcher,
    private readonly sweeper: OfflineSweeper,
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
  ) {}

  async start(platform: NatsConnection): Promise<void> {
    const subscription = platform.subscribe(platformUpWildcard("hb"), { queue: GATEWAY_QUEUE_GROUP });
    this.subscription = subscription;
    this.batcher.start();
    this.sweeper.start();
    this.loop = (async () => {
      // Not awaited per message: concurrent lookups of unknown nodes share one query (reconnect storms).
      for await (const msg of subscription)
        void runInBackground(this.logger, "heartbeat", () => this.handle(msg.subject, msg.data));
    })();
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
    this.subscription?.unsubscribe();
    this.subscription = null;
    await this.loop;
    await this.sweeper.stop();
    await this.batcher.stop();
  }
}
