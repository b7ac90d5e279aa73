import { loadavg } from "node:os";
import { EF_UP_STREAM } from "@edgefleet/agent-sdk/protocol";
import type { JetStreamManager } from "@nats-io/jetstream";
import pg from "pg";
import { timedRequest } from "../console/http.js";
import type { WorkerPool } from "../workers.js";
import type { Observation, TimelineSample } from "./results.js";

/**
 * Once a second, what users and agents see, each probe bounded so a dead server costs a timeout, not
 * the sample: both gateways' readiness, both consoles' REST API, a signed-in session, Keycloak, the
 * agents' outboxes per site, EF_UP's backlog, the rollout's controller and the inventory. Failing
 * answers are also kept with their body (what a user would have read).
 */

const PROBE_TIMEOUT_MS = 2_000;
/** The gateway's durable consumer on EF_UP (apps/gateway/src/edge/ingest/ef-up-stream.ts). */
const GATEWAY_CONSUMER = "gateway";
/** Every this many seconds each console runs a command on a node (console → gateway → node and back). */
const COMMAND_EVERY = 5;

export interface SamplerTargets {
  gatewayUrls: string[];
  consoleUrls: string[];
  apiKey: string;
  /** Cookie header of a signed-in person on console 1. */
  session: string;
  keycloakIssuer: string;
  databaseUrl: string;
  organizationId: string;
  jsm: () => JetStreamManager | null;
  workers: WorkerPool;
}

export class TimelineSampler {
  readonly samples: TimelineSample[] = [];
  readonly observations: Observation[] = [];
  /** The rollout under way (set once it is created). */
  rollout: { id: string; appId: string; versionId: string } | null = null;
  /**
   * Per console, a node of the connected site that its node-command probe asks for a report: one
   * each, because a node runs one command at a time and answers a second one `busy` (with one
   * node for both consoles the probes refused each other, whatever the servers did).
   */
  commandNodes: string[] = [];
  /** Each console's last node-command answer (probed every COMMAND_EVERY samples: it costs reports). */
  private readonly lastCommand: Array<number | null> = [];
  private ticks = 0;
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private busy = false;

  constructor(private readonly targets: SamplerTargets) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.busy) return;
      this.busy = true;
      void this.sample()
        .then((sample) => this.samples.push(sample))
        .finally(() => {
          this.busy = false;
        });
    }, 1_000);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    while (this.busy) await new Promise((resolve) => setTimeout(resolve, 50));
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  /** The latest sample (progress lines). */
  last(): TimelineSample | undefined {
    return this.samples.at(-1);
  }

  private async sample(): Promise<TimelineSample> {
    const at = Date.now();
    const { targets } = this;
    if (this.ticks++ % COMMAND_EVERY === 0)
      for (const [index, url] of targets.consoleUrls.entries()) {
        const node = this.commandNodes[index];
        if (node) void this.probeCommand(index, url, node);
      }
    const status = (probe: string, url: string, headers: Record<string, string> = {}) =>
      timedRequest(url, { headers, timeoutMs: PROBE_TIMEOUT_MS }).then(
        (response) => {
          if (response.status >= 300) this.observe(at, probe, response.status, response.body);
          return response.status;
        },
        (error: unknown) => {
          this.observe(at, probe, null, error instanceof Error ? error.message : String(error));
          return null;
        },
      );
    const [gateways, consoles, session, keycloak, ingestBacklog, inventory] = await Promise.all([
      Promise.all(targets.gatewayUrls.map((url, i) => status(`gateway-${i + 1} /readyz`, `${url}/readyz`))),
      Promise.all(
        targets.consoleUrls.map((url, i) =>
          status(`console-${i + 1} REST API`, `${url}/api/v1/nodes/counts`, {
            authorization: `Bearer ${targets.apiKey}`,
          }),
        ),
      ),
      status("console-1 signed-in page data (tRPC)", `${targets.consoleUrls[0]}/api/trpc/node.counts`, {
        cookie: targets.session,
      }),
      status("Keycloak (sign-in)", `${targets.keycloakIssuer}/.well-known/openid-configuration`),
      this.ingestBacklog(),
      this.inventory(),
    ]);
    const siteA = targets.workers.progressOf(0);
    const siteB = targets.workers.progressOf(1);
    return {
      at,
      gateways,
      consoles,
      session,
      keycloak,
      ingestBacklog,
      nodeCommands: targets.consoleUrls.map((_, index) => this.lastCommand[index] ?? null),
      agentBacklog: [siteA.backlog, siteB.backlog],
      agentsConnected: [siteA.connected, siteB.connected],
      controllerLeasing: inventory?.leasing ?? null,
      running: inventory?.running ?? null,
      online: inventory?.online ?? null,
      loadAverage: loadavg()[0] ?? 0,
    };
  }

  /**
   * A forced report through console `index`'s REST API: the console asks a gateway (it tries the
   * next replica when one cannot be reached), the gateway asks the node over NATS. 200 with the
   * node's answer is ok; an answer without it counts as 502.
   */
  private async probeCommand(index: number, url: string, nodeId: string): Promise<void> {
    const at = Date.now();
    const probe = `console-${index + 1} node command`;
    try {
      const response = await timedRequest(`${url}/api/v1/nodes/${nodeId}/commands`, {
        method: "POST",
        headers: { authorization: `Bearer ${this.targets.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ command: "report", timeoutSeconds: 5 }),
        timeoutMs: 9_000,
      });
      const succeeded =
        response.status === 200 && (JSON.parse(response.body) as { succeeded?: number }).succeeded === 1;
      const status = response.status === 200 && !succeeded ? 502 : response.status;
      if (status >= 300) this.observe(at, probe, status, response.body);
      this.lastCommand[index] = status;
    } catch (error) {
      this.observe(at, probe, null, error instanceof Error ? error.message : String(error));
      this.lastCommand[index] = null;
    }
  }

  private observe(at: number, probe: string, status: number | null, detail: string): void {
    this.observations.push({ at, probe, status, detail: detail.replace(/\s+/g, " ").slice(0, 300) });
  }

  private async ingestBacklog(): Promise<number | null> {
    const jsm = this.targets.jsm();
    if (!jsm) return null;
    try {
      const info = await Promise.race([
        jsm.consumers.info(EF_UP_STREAM, GATEWAY_CONSUMER),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timeout")), PROBE_TIMEOUT_MS)),
      ]);
      return info.num_pending + info.num_ack_pending;
    } catch {
      return null;
    }
  }

  private async inventory(): Promise<{
    leasing: boolean | null;
    running: number | null;
    online: number;
  } | null> {
    try {
      if (!this.client) {
        const client = new pg.Client({
          connectionString: this.targets.databaseUrl,
          connectionTimeoutMillis: PROBE_TIMEOUT_MS,
          statement_timeout: PROBE_TIMEOUT_MS,
        });
        // A dead server errors the idle client: drop it, the next sample connects again.
        client.on("error", () => {
          if (this.client === client) this.client = null;
        });
        await client.connect();
        this.client = client;
      }
      const rollout = this.rollout;
      const result = await this.client.query<{
        online: string;
        running: string | null;
        leasing: boolean | null;
      }>(
        `SELECT (SELECT count(*) FROM node WHERE organization_id = $1 AND status = 'online'
              AND labels @> '{"ha":"fleet"}') AS online,
           (SELECT count(*) FROM app_instance WHERE app_id = $2::uuid AND state = 'running'
              AND observed_version_id = $3::uuid) AS running,
           (SELECT lease_owner IS NOT NULL AND lease_until > now() FROM rollout WHERE id = $4::uuid) AS leasing`,
        [
          this.targets.organizationId,
          rollout?.appId ?? null,
          rollout?.versionId ?? null,
          rollout?.id ?? null,
        ],
      );
      const row = result.rows[0];
      return {
        online: Number(row?.online ?? 0),
        running: rollout ? Number(row?.running ?? 0) : null,
        leasing: rollout ? (row?.leasing ?? false) : null,
      };
    } catch {
      await this.client?.end().catch(() => undefined);
      this.client = null;
      return null;
    }
  }
}
