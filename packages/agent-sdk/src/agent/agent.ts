import { randomBytes } from "node:crypto";
import { arch as osArch, platform } from "node:os";
import { type JetStreamClient, jetstream } from "@nats-io/jetstream";
import { connect, type Msg, type NatsConnection, type Server } from "@nats-io/transport-node";
import type { ChunkAnswer, ChunkSource } from "../artifacts/chunk-source.js";
import { siteCacheFirst } from "../artifacts/site-cache-source.js";
import { type Logger, silentLogger } from "../logger.js";
import type { HostSampler } from "../metrics/host.js";
import { nativeJwtAuthenticator } from "../nkeys/native.js";
import {
  AGENT_MAX_COMMANDS_IN_FLIGHT,
  AGENT_MAX_LOG_SESSIONS,
  agentDownSubject,
  agentUpSubject,
  type CommandReply,
  type CommandRequest,
  type DecodeFailureReason,
  type DesiredDeltaBody,
  type Diagnostics,
  type DurableUpType,
  decodeMessage,
  downlinkMessageType,
  encodeMessage,
  type NodeAddress,
  nodeAddressFromJwt,
  nodeInboxPrefix,
  PROTOCOL_VERSION,
} from "../protocol/index.js";
import type { Runtime } from "../runtime/runtime.js";
import { AGENT_VERSION } from "../version.js";
import { type BackoffPolicy, type ConnectPacer, fullJitterDelay, ReconnectBackoff } from "./backoff.js";
import { answerCommand, encodeCommandReply, RecentLog } from "./commands.js";
import { ControlBytes } from "./control-bytes.js";
import { LogSession } from "./log-session.js";
import { type Outbox, SerialQueue } from "./outbox.js";
import { runProbe } from "./probe.js";
import type { AgentState, StateStore } from "./state-store.js";

export interface AgentOptions {
  /** NATS URLs: the site's leaf node, or the hub's leaf port. */
  servers: string[];
  /**
   * The node's credentials: its user JWT, whose permissions name every subject the node may use
   * (`nodeAddressFromJwt`), and its nkey seed.
   */
  credentials: NodeCredentials;
  /**
   * Stores credentials the control plane re-issued (HelloReply.jwt, CredentialsUpdate: a site
   * move, or credentials of subject layout 1), before the agent connects with them. Without it
   * they live in memory only (hollow agents).
   */
  saveCredentials?: (jwt: string) => Promise<void>;
  runtime: Runtime;
  outbox: Outbox;
  stateStore: StateStore;
  hostSampler: HostSampler;
  /** Used until the first HelloReply names the interval. */
  heartbeatSeconds?: number;
  metricsSeconds?: number;
  /** A StatusReport also goes out this often without a change (default 600). */
  statusRefreshSeconds?: number;
  reconnect?: BackoffPolicy;
  /** Shared by agents of one process (hollow fleets): spaces their reconnect attempts. */
  reconnectPacer?: ConnectPacer;
  requestTimeoutMs?: number;
  /** Wait for one artifact chunk (default 10 s: 128 KiB over a slow link). */
  chunkTimeoutMs?: number;
  /**
   * How often, at least, the agent makes sure its link is alive (default 90 s; 1.5 metrics
   * intervals if longer): a PING only when nothing came in since the last check (see checkLink).
   */
  linkCheckMs?: number;
  /** Connection name shown in the server's monitoring. */
  name?: string;
  /** Settings shown in a diagnostics bundle (no secrets: name credentials by path). */
  settings?: Record<string, string>;
  logger?: Logger;
}

export interface NodeCredentials {
  jwt: string;
  /** The node's nkey seed ("SU…"); never leaves the node. */
  seed: string;
}

export interface AgentStats {
  connected: boolean;
  /** The subjects the node speaks on now (from its current credentials). */
  address: NodeAddress;
  /** Times the agent connected again with re-issued credentials. */
  credentialSwitches: number;
  appliedRevision: number;
  heartbeatsSent: number;
  hellosAnswered: number;
  durableDelivered: number;
  /** Received messages rejected by decodeMessage, per reason. */
  rejected: Partial<Record<DecodeFailureReason, number>>;
  outbox: ReturnType<Outbox["stats"]>;
  controlBytes: ReturnType<ControlBytes["snapshot"]>;
}

const DEFAULT_RECONNECT: BackoffPolicy = { baseMs: 500, maxMs: 30_000 };
const RETRY_POLICY: BackoffPolicy = { baseMs: 1_000, maxMs: 30_000 };
const STATUS_DEBOUNCE_MS = 100;
const FLUSH_BATCH = 32;
/**
 * A metrics report carries the round trip to the server (a PING and PONG of its own) at most this
 * often, not at every report. Four minutes keeps the series within Prometheus' 5-minute lookback.
 */
const RTT_EVERY_MS = 240_000;
/** Rough NATS framing per message (verb, sid, sizes, CRLFs), counted in control bytes. */
const FRAMING_BYTES = 20;

/**
 * The agent core: one connection with node credentials, Hello on every (re)connect, desired state
 * applied through a Runtime and acknowledged, heartbeats, and status/metrics/acks through the
 * on-disk outbox so nothing is lost or duplicated across link loss or agent restarts.
 */
export class Agent {
  private readonly logger: Logger;
  private readonly control = new ControlBytes();
  private readonly backoff: ReconnectBackoff;
  private readonly stateQueue = new SerialQueue();
  private readonly bootId = randomBytes(6).toString("hex");
  private readonly stopping = new AbortController();
  private state!: AgentState;
  private nc: NatsConnection | undefined;
  private js: JetStreamClient | undefined;
  private connected = false;
  private heartbeatMs: number;
  private metricsMs: number;
  private heartbeatSequence = 0;
  /** HelloReply.rq: the gateway counts metrics reports as signs of life (see heartbeatQuietUntil). */
  private reportsQuietHeartbeat = false;
  /** When the hub last acknowledged a metrics report (ms; 0: never on this run). */
  private metricsAckedAt = 0;
  /** When a metrics report last timed the round trip (ms; 0: never). */
  private rttAt = 0;
  /** The connection's inbound message count at the last link check. */
  private linkInMsgs = -1;
  private timers = new Set<NodeJS.Timeout>();
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private metricsTimer: NodeJS.Timeout | undefined;
  private linkTimer: NodeJS.Timeout | undefined;
  private statusDebounce: NodeJS.Timeout | undefined;
  private lastStatusKey = "";
  private unsubscribeRuntime: (() => void) | undefined;
  private flushing = false;
  private flushAgain = false;
  private flushFailures = 0;
  private helloRunning = false;
  private helloAgain = false;
  private connectionLoop: Promise<void> = Promise.resolve();
  private readonly counters = {
    heartbeatsSent: 0,
    hellosAnswered: 0,
    durableDelivered: 0,
    credentialSwitches: 0,
  };
  /** Current credentials and the subjects they name (replaced when the control plane re-issues them). */
  private credentials: NodeCredentials;
  private address: NodeAddress;
  /**
   * Whether this connection's Hello was answered. Buffered reports wait for it: a HelloReply may
   * carry new credentials (a site move while offline), and reports sent on the old subjects
   * after the move would be refused by the gateway.
   */
  private synced = false;
  /** Set while the connection is closed to connect again with new credentials (no backoff). */
  private switching = false;
  private markFirstConnection: () => void = () => undefined;
  /** Settles once: at the first connection (handshake and authentication done) or at stop(). */
  private readonly firstConnection = new Promise<void>((resolve) => {
    this.markFirstConnection = resolve;
  });
  private readonly rejected: Partial<Record<DecodeFailureReason, number>> = {};
  /** The agent's own recent log, for diagnostics bundles. */
  private readonly recentLog = new RecentLog();
  private readonly startedAt = Date.now();
  private commandsInFlight = 0;
  /** Live log sessions by request id (docs/protocol.md, "Live logs"). */
  private readonly logSessions = new Map<string, LogSession>();
  private leaseTimer: NodeJS.Timeout | undefined;

  private constructor(private readonly options: AgentOptions) {
    this.logger = this.recentLog.tee(options.logger ?? silentLogger);
    this.credentials = options.credentials;
    const address = nodeAddressFromJwt(options.credentials.jwt);
    if (!address) throw new Error("the node credentials name no node subjects (ef.up.<site>.<wid>.>)");
    this.address = address;
    this.backoff = new ReconnectBackoff(
      options.reconnect ?? DEFAULT_RECONNECT,
      Math.random,
      options.reconnectPacer,
    );
    this.heartbeatMs = (options.heartbeatSeconds ?? 30) * 1000;
    this.metricsMs = (options.metricsSeconds ?? 60) * 1000;
  }

  /** Restores state, restarts the desired apps, and connects in the background (works offline). */
  static async start(options: AgentOptions): Promise<Agent> {
    const agent = new Agent(options);
    await agent.begin();
    return agent;
  }

  /**
   * Resolves when the agent first holds a connection (or is stopped before that). Lets a process
   * that starts many agents bound the handshakes in flight: a server drops a connection that does
   * not authenticate within its auth timeout, and a busy event loop answers late.
   */
  connectedOnce(): Promise<void> {
    return this.firstConnection;
  }

  /** Cheap to ask often (stats() copies counters and buffers). */
  isConnected(): boolean {
    return this.connected;
  }

  /** Hellos answered since start: each (re)connect ends with one once the agent is resynced. */
  hellosAnswered(): number {
    return this.counters.hellosAnswered;
  }

  stats(): AgentStats {
    return {
      connected: this.connected,
      address: { ...this.address },
      appliedRevision: this.state.rev,
      ...this.counters,
      rejected: { ...this.rejected },
      outbox: this.options.outbox.stats(),
      controlBytes: this.control.snapshot(),
    };
  }

  /** Clean shutdown: stop apps, deliver what is buffered (bounded wait), close the connection. */
  async stop(flushTimeoutMs = 5_000): Promise<void> {
    if (this.stopping.signal.aborted) return;
    this.unsubscribeRuntime?.();
    for (const session of [...this.logSessions.values()]) session.end("shutdown");
    clearInterval(this.leaseTimer);
    for (const timer of [
      this.heartbeatTimer,
      this.metricsTimer,
      this.linkTimer,
      this.statusDebounce,
      ...this.timers,
    ])
      clearTimeout(timer);
    await this.options.runtime.shutdown();
    const deadline = Date.now() + flushTimeoutMs;
    while (this.connected && this.options.outbox.stats().records > 0 && Date.now() < deadline) {
      this.kickFlush();
      await sleep(50);
    }
    this.stopping.abort();
    this.markFirstConnection();
    const nc = this.nc;
    if (nc) await nc.drain().catch(() => nc.close());
    await this.connectionLoop;
    await this.stateQueue.run(async () => undefined);
    await this.options.outbox.close();
  }

  private async begin(): Promise<void> {
    this.state = await this.options.stateStore.load();
    // The site's leaf cache first, the gateway for whatever it does not hold (site-cache-source.ts).
    this.options.runtime.useChunkSource?.(
      siteCacheFirst({
        connection: () => (this.connected ? (this.nc ?? null) : null),
        fallback: this.chunkSource,
        onSent: (bytes) => this.control.sent("art", bytes + FRAMING_BYTES),
        onReceived: (bytes) => this.control.received("art", bytes + FRAMING_BYTES),
        counters: this.chunkCounters,
      }),
    );
    for (const [app, desired] of Object.entries(this.state.desired))
      this.options.runtime.put(app, desired.ver, desired.spec, desired.art);
    this.unsubscribeRuntime = this.options.runtime.onChange(() => this.scheduleStatus());
    this.scheduleStatus();
    this.scheduleLinkCheck();
    this.scheduleHeartbeat();
    this.scheduleMetrics();
    this.every((this.options.statusRefreshSeconds ?? 600) * 1000, () => this.reportStatus(true));
    this.connectionLoop = this.runConnections();
  }

  /** Connects, and connects again from scratch if the client gives up (e.g. rejected credentials). */
  private async runConnections(): Promise<void> {
    let attempt = 0;
    while (!this.stopping.signal.aborted) {
      let nc: NatsConnection;
      try {
        nc = await connect({
          servers: this.options.servers,
          authenticator: nativeJwtAuthenticator(this.credentials.jwt, this.credentials.seed),
          inboxPrefix: nodeInboxPrefix(this.address),
          name: this.options.name ?? `edgefleet-agent ${this.address.wid}`,
          maxReconnectAttempts: -1,
          waitOnFirstConnect: true,
          reconnectDelayHandler: this.backoff.delay,
          ...(this.options.reconnectPacer
            ? { reconnectToServer: this.pacedServer(this.options.reconnectPacer) }
            : {}),
          // The agent's own link check (checkLink) notices a dead link and pings only a silent one;
          // the client's pings, which go out whatever else flows, are only a backstop. At 30 s they
          // were two thirds of an idle node's frames at its leaf.
          pingInterval: 600_000,
          maxPingOut: 2,
          // Otherwise every request (Hello, each buffered report's publish) captures a stack trace
          // up front for a timeout that rarely comes: measurable CPU on a small device, and in a
          // process of thousands of hollow agents.
          noAsyncTraces: true,
        });
      } catch (error) {
        const delay = fullJitterDelay(attempt++, this.options.reconnect ?? DEFAULT_RECONNECT);
        this.logger.warn("cannot connect", { error: errorText(error), retryInMs: delay });
        await sleep(delay, this.stopping.signal);
        continue;
      }
      attempt = 0;
      if (this.stopping.signal.aborted) {
        await nc.close();
        return;
      }
      this.attach(nc);
      const closedWith = await nc.closed();
      this.connected = false;
      this.synced = false;
      this.nc = undefined;
      this.js = undefined;
      if (this.switching) {
        // Closed on purpose to connect with re-issued credentials: at once.
        this.switching = false;
        continue;
      }
      if (!this.stopping.signal.aborted) {
        this.logger.warn("connection closed, starting over", { error: errorText(closedWith) });
        await sleep(fullJitterDelay(6, this.options.reconnect ?? DEFAULT_RECONNECT), this.stopping.signal);
      }
    }
  }

  /** Every dial waits for its slot of the shared pacer (the client redials a restarted server at once). */
  private pacedServer(pacer: ConnectPacer) {
    return (pool: ReadonlyArray<Server>) => {
      const server = pool[0];
      return server ? { server, delay: pacer.slotAfter(0) } : null;
    };
  }

  private attach(nc: NatsConnection): void {
    this.nc = nc;
    this.js = jetstream(nc);
    this.connected = true;
    this.synced = false;
    this.markFirstConnection();
    this.backoff.reset();
    this.logger.info("connected", { server: nc.getServer(), site: this.address.site });
    // One downlink subscription for deltas, commands and credentials (docs/protocol.md, "Commands").
    nc.subscribe(agentDownSubject(this.address), {
      callback: (error, msg) => {
        if (error) return;
        const type = downlinkMessageType(msg.data);
        if (type === "commandRequest") this.onCommand(msg);
        else if (type === "credentialsUpdate") this.onCredentialsUpdate(msg);
        else this.onDelta(msg);
      },
    });
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === "disconnect") {
          this.connected = false;
          this.synced = false;
          this.logger.warn("disconnected", { server: status.server });
        } else if (status.type === "reconnecting") {
          this.backoff.nextAttempt();
        } else if (status.type === "reconnect") {
          this.connected = true;
          this.backoff.reset();
          this.logger.info("reconnected", { server: status.server });
          this.requestHello();
          this.kickFlush();
        }
      }
    })();
    this.requestHello();
    this.kickFlush();
  }

  // --- desired state ---------------------------------------------------------------------------

  private onDelta(msg: Msg): void {
    this.control.received("delta", msg.subject.length + msg.data.byteLength + FRAMING_BYTES);
    const decoded = decodeMessage("desiredDelta", msg.data);
    if (!decoded.ok) {
      this.reject("desiredDelta", decoded.reason, decoded.detail);
      return;
    }
    void this.applyDelta(decoded.msg);
  }

  /** Applies a delta in order with other state changes; asks again through Hello on a gap. */
  private applyDelta(delta: DesiredDeltaBody): Promise<void> {
    return this.stateQueue.run(async () => {
      if (delta.to <= this.state.rev) return;
      if (delta.from > this.state.rev) {
        this.logger.warn("desired state gap, asking again", { applied: this.state.rev, from: delta.from });
        this.requestHello();
        return;
      }
      for (const put of delta.put) {
        this.options.runtime.put(put.app, put.ver, put.spec, put.art);
        this.state.desired[put.app] = { ver: put.ver, spec: put.spec, ...(put.art ? { art: put.art } : {}) };
      }
      for (const app of delta.del) {
        this.options.runtime.remove(app);
        delete this.state.desired[app];
      }
      this.state.rev = delta.to;
      await this.options.stateStore.save(this.state);
      this.logger.info("desired state applied", {
        rev: delta.to,
        put: delta.put.length,
        del: delta.del.length,
      });
      await this.appendDurable(
        "ack",
        delta.to,
        encodeMessage("desiredAck", { v: PROTOCOL_VERSION, rev: delta.to }),
      );
    });
  }

  private requestHello(): void {
    if (this.helloRunning) {
      this.helloAgain = true;
      return;
    }
    this.helloRunning = true;
    void this.hello().finally(() => {
      this.helloRunning = false;
      if (this.helloAgain) {
        this.helloAgain = false;
        this.requestHello();
      }
    });
  }

  /** Hello until answered (while connected); applies the delta in the reply. */
  private async hello(): Promise<void> {
    for (let attempt = 0; this.connected && !this.stopping.signal.aborted; attempt++) {
      const nc = this.nc;
      if (!nc) return;
      const subject = agentUpSubject(this.address, "hello");
      const payload = encodeMessage("hello", {
        v: PROTOCOL_VERSION,
        av: AGENT_VERSION,
        os: platform(),
        arch: osArch(),
        boot: this.bootId,
        rev: this.state.rev,
      });
      try {
        this.control.sent("hello", subject.length + payload.byteLength + FRAMING_BYTES);
        const reply = await nc.request(subject, payload, { timeout: this.options.requestTimeoutMs ?? 5_000 });
        this.control.received("hello", reply.subject.length + reply.data.byteLength + FRAMING_BYTES);
        const decoded = decodeMessage("helloReply", reply.data);
        if (decoded.ok) {
          this.counters.hellosAnswered++;
          this.setIntervals(decoded.msg.hb, decoded.msg.mx);
          this.reportsQuietHeartbeat = decoded.msg.rq === true;
          // New credentials first: this connection's subjects are not the node's any more (the
          // delta comes with the Hello on the new ones).
          if (decoded.msg.jwt && (await this.useCredentials(decoded.msg.jwt, "hello"))) return;
          if (decoded.msg.d) await this.applyDelta(decoded.msg.d);
          this.synced = true;
          this.kickFlush();
          return;
        }
        this.reject("helloReply", decoded.reason, decoded.detail);
      } catch (error) {
        this.logger.warn("hello not answered", { error: errorText(error) });
      }
      await sleep(fullJitterDelay(attempt, RETRY_POLICY), this.stopping.signal);
    }
  }

  private setIntervals(heartbeatSeconds: number, metricsSeconds: number): void {
    const heartbeatMs = heartbeatSeconds * 1000;
    const metricsMs = metricsSeconds * 1000;
    if (heartbeatMs !== this.heartbeatMs) {
      this.heartbeatMs = heartbeatMs;
      this.scheduleHeartbeat();
    }
    if (metricsMs !== this.metricsMs) {
      this.metricsMs = metricsMs;
      this.scheduleMetrics();
    }
  }

  // --- credentials -----------------------------------------------------------------------------

  private onCredentialsUpdate(msg: Msg): void {
    const decoded = decodeMessage("credentialsUpdate", msg.data);
    if (!decoded.ok) {
      this.reject("credentialsUpdate", decoded.reason, decoded.detail);
      return;
    }
    void this.useCredentials(decoded.msg.jwt, "downlink").catch((error) =>
      this.logger.error("cannot use new credentials", { error: errorText(error) }),
    );
  }

  /**
   * Re-issued credentials (docs/protocol.md, "Credentials"): stored first, then, when they name
   * other subjects (another site, or subject layout 2 after layout 1), the connection is closed
   * and opened again with them at once; its Hello resyncs, and buffered reports go out on the new
   * subjects after it. True when the agent switched.
   */
  private async useCredentials(jwt: string, via: "hello" | "downlink"): Promise<boolean> {
    const address = nodeAddressFromJwt(jwt);
    if (!address || address.wid !== this.address.wid) {
      this.logger.warn("ignoring credentials that do not name this node", { via });
      return false;
    }
    await this.options.saveCredentials?.(jwt);
    this.credentials = { ...this.credentials, jwt };
    if (address.site === this.address.site && address.down === this.address.down) return false;
    this.logger.info("switching to re-issued credentials", {
      via,
      from: this.address.site,
      to: address.site,
    });
    this.address = address;
    this.counters.credentialSwitches++;
    // A fresh snapshot on the new subjects: one sent on the old ones after a move may be refused.
    void this.reportStatus(true).catch(() => undefined);
    const nc = this.nc;
    if (nc && !nc.isClosed()) {
      this.switching = true;
      this.connected = false;
      this.synced = false;
      await nc.close().catch(() => undefined);
    }
    return true;
  }

  // --- commands --------------------------------------------------------------------------------

  /** An operator's command: answered on the node's own `ef.up.<site>.<wid>.cmd`, at most 4 at once. */
  private onCommand(msg: Msg): void {
    this.control.received("cmd", msg.subject.length + msg.data.byteLength + FRAMING_BYTES);
    const decoded = decodeMessage("commandRequest", msg.data);
    if (!decoded.ok) {
      this.reject("commandRequest", decoded.reason, decoded.detail);
      return;
    }
    const request = decoded.msg;
    if (request.cmd === "logs" || request.cmd === "credit" || request.cmd === "cancel") {
      this.onLogCommand(request);
      return;
    }
    if (this.commandsInFlight >= AGENT_MAX_COMMANDS_IN_FLIGHT) {
      this.sendCommandReply({
        v: PROTOCOL_VERSION,
        id: request.id,
        ok: false,
        err: "busy",
        why: `the node already runs ${AGENT_MAX_COMMANDS_IN_FLIGHT} commands`,
      });
      return;
    }
    this.commandsInFlight++;
    this.logger.info("command", {
      id: request.id,
      cmd: request.cmd,
      ...(request.app ? { app: request.app } : {}),
    });
    void this.runCommand(request).finally(() => {
      this.commandsInFlight--;
    });
  }

  /** Opens, credits or ends a live log session; the node never streams without a `logs` request. */
  private onLogCommand(request: CommandRequest): void {
    const base = { v: PROTOCOL_VERSION, id: request.id } as const;
    const session = this.logSessions.get(request.id);
    if (request.cmd === "credit") {
      // A session this node does not have (it restarted, or the lease lapsed): say it ended.
      if (session) session.grant(request.cr ?? 0);
      else this.sendCommandReply({ ...base, ok: true, lg: { p: 0, l: [], end: "lapsed" } });
      return;
    }
    if (request.cmd === "cancel") {
      session?.end("cancelled");
      return;
    }
    if (session) return; // a repeated open: the session runs already
    const runtime = this.options.runtime;
    if (!runtime.appLog) {
      this.sendCommandReply({
        ...base,
        ok: false,
        err: "unsupported",
        why: "this runtime keeps no app output",
      });
      return;
    }
    const log = runtime.appLog(request.app as string);
    if (!log) {
      this.sendCommandReply({
        ...base,
        ok: false,
        err: "unknown_app",
        why: `no app ${request.app} on this node`,
      });
      return;
    }
    if (this.logSessions.size >= AGENT_MAX_LOG_SESSIONS) {
      this.sendCommandReply({
        ...base,
        ok: false,
        err: "busy",
        why: `the node already serves ${AGENT_MAX_LOG_SESSIONS} log sessions`,
      });
      return;
    }
    const opened = new LogSession({
      id: request.id,
      log,
      tail: request.n ?? 100,
      follow: request.f ?? true,
      budget: request.bud as number,
      credit: request.cr ?? 0,
      send: (reply) => this.sendCommandReply(reply),
      onEnd: (reason) => {
        this.logSessions.delete(request.id);
        this.logger.info("log session ended", { id: request.id, reason });
        if (this.logSessions.size === 0) {
          clearInterval(this.leaseTimer);
          this.leaseTimer = undefined;
        }
      },
    });
    this.logSessions.set(request.id, opened);
    this.logger.info("log session", { id: request.id, app: request.app });
    if (!this.leaseTimer) {
      this.leaseTimer = setInterval(() => {
        for (const each of [...this.logSessions.values()]) each.checkLease();
      }, 5_000);
      this.leaseTimer.unref();
    }
    opened.start();
  }

  private async runCommand(request: CommandRequest): Promise<void> {
    if (request.cmd === "probe") {
      this.sendCommandReply(await this.probe(request));
      return;
    }
    const reply = await answerCommand(request, {
      runtime: this.options.runtime,
      diagnostics: () => this.diagnostics(),
      forceReport: () => this.forceReport(),
    });
    this.sendCommandReply(reply);
  }

  private sendCommandReply(reply: CommandReply): void {
    const nc = this.nc;
    if (!nc || !this.connected) return;
    const subject = agentUpSubject(this.address, "cmd");
    const payload = encodeCommandReply(reply);
    try {
      nc.publish(subject, payload);
      this.control.sent("cmd", subject.length + payload.byteLength + FRAMING_BYTES);
    } catch (error) {
      this.logger.warn("command reply not sent", { id: reply.id, error: errorText(error) });
    }
  }

  private async probe(request: CommandRequest): Promise<CommandReply> {
    const base = { v: PROTOCOL_VERSION, id: request.id } as const;
    const nc = this.nc;
    if (!nc || !this.connected) return { ...base, ok: false, err: "failed", why: "not connected" };
    try {
      const prb = await runProbe(nc, this.address, {
        id: request.id,
        to: request.to ?? "leaf",
        bytes: request.by ?? 0,
        ms: request.ms ?? 0,
      });
      return { ...base, ok: true, prb };
    } catch (error) {
      return { ...base, ok: false, err: "failed", why: `probe failed: ${errorText(error)}`.slice(0, 256) };
    }
  }

  private async diagnostics(): Promise<Diagnostics> {
    const host = await this.options.hostSampler.sample();
    return {
      av: AGENT_VERSION,
      os: platform(),
      arch: osArch(),
      up: Math.floor((Date.now() - this.startedAt) / 1000),
      cfg: {
        servers: this.options.servers.join(","),
        wid: this.address.wid,
        site: this.address.site ?? "(subject layout 1)",
        heartbeatSeconds: String(this.heartbeatMs / 1000),
        metricsSeconds: String(this.metricsMs / 1000),
        appliedRevision: String(this.state.rev),
        outboxRecords: String(this.options.outbox.stats().records),
        ...this.options.settings,
      },
      du: host.du,
      dt: host.dt,
      log: this.recentLog.snapshot(),
      inst: this.options.runtime.instances(),
    };
  }

  /** A status snapshot and a metrics report, queued now (delivered like any other). */
  private async forceReport(): Promise<{ st: number; mx: number }> {
    await this.reportStatus(true);
    await this.reportMetrics();
    return { st: this.state.seq.st, mx: this.state.seq.mx };
  }

  // --- artifacts -------------------------------------------------------------------------------

  /**
   * Artifact chunks from the gateway: request/reply on the node's own `ef.up.<site>.<wid>.art`, the reply
   * on the connection's inbox (the one subscription Hello already uses, no new one per node).
   */
  /** Artifact chunks answered by the site's leaf cache and by the gateway (tests, the bench). */
  readonly chunkCounters = { siteCache: 0, fallback: 0 };

  private readonly chunkSource: ChunkSource = {
    chunk: async (obj, off, len): Promise<ChunkAnswer> => {
      const nc = this.nc;
      if (!nc || !this.connected) throw new Error("not connected");
      const subject = agentUpSubject(this.address, "art");
      const payload = encodeMessage("artifactChunkRequest", { v: PROTOCOL_VERSION, obj, off, len });
      this.control.sent("art", subject.length + payload.byteLength + FRAMING_BYTES);
      const reply = await nc.request(subject, payload, { timeout: this.options.chunkTimeoutMs ?? 10_000 });
      this.control.received("art", reply.subject.length + reply.data.byteLength + FRAMING_BYTES);
      const decoded = decodeMessage("artifactChunkReply", reply.data);
      if (!decoded.ok) {
        this.reject("artifactChunkReply", decoded.reason, decoded.detail);
        throw new Error(`bad chunk reply: ${decoded.reason}: ${decoded.detail}`);
      }
      const answer = decoded.msg;
      if (answer.err) return { ok: false, err: answer.err, ...(answer.why ? { why: answer.why } : {}) };
      if (answer.off !== off) throw new Error(`chunk reply for offset ${answer.off}, asked ${off}`);
      return { ok: true, size: answer.size ?? 0, data: answer.data ?? new Uint8Array() };
    },
  };

  // --- up messages -----------------------------------------------------------------------------

  /**
   * The first tick after start or an interval change comes at a random point of the interval:
   * agents started together (a hollow fleet, a site after a power cut) do not tick together.
   */
  private scheduleHeartbeat(first = true, delayMs?: number): void {
    clearTimeout(this.heartbeatTimer);
    if (this.stopping.signal.aborted) return;
    this.heartbeatTimer = setTimeout(
      () => {
        const quietFor = this.heartbeatQuietUntil() - Date.now();
        if (quietFor > 0) {
          this.scheduleHeartbeat(false, quietFor);
          return;
        }
        this.heartbeat();
        this.scheduleHeartbeat(false);
      },
      delayMs ?? (first ? Math.random() * this.heartbeatMs : this.heartbeatMs),
    );
  }

  /**
   * Until when no heartbeat is needed: with HelloReply.rq, the gateway counts each metrics report
   * the hub stored as a sign of life, so a heartbeat goes out only after an interval (and a
   * twentieth, so a report on the same period wins the race) without an acknowledged report.
   * An idle fleet then sends its metrics and nothing else (docs/protocol.md).
   */
  private heartbeatQuietUntil(): number {
    if (!this.reportsQuietHeartbeat || this.metricsAckedAt === 0) return 0;
    return this.metricsAckedAt + this.heartbeatMs + this.heartbeatMs / 20;
  }

  /** Core publish, only while connected: a missed heartbeat is the signal, not something to buffer. */
  private heartbeat(): void {
    const nc = this.nc;
    if (!nc || !this.connected) return;
    const subject = agentUpSubject(this.address, "hb");
    const payload = encodeMessage("heartbeat", { v: PROTOCOL_VERSION, s: this.heartbeatSequence++ });
    try {
      nc.publish(subject, payload);
      this.counters.heartbeatsSent++;
      this.control.sent("hb", subject.length + payload.byteLength + FRAMING_BYTES);
    } catch (error) {
      this.logger.warn("heartbeat not sent", { error: errorText(error) });
    }
  }

  /** linkCheckMs, or one and a half metrics intervals if longer (a report falls within each). */
  private linkCheckEveryMs(): number {
    return Math.max(this.options.linkCheckMs ?? 90_000, this.metricsMs * 1.5);
  }

  private scheduleLinkCheck(): void {
    if (this.stopping.signal.aborted) return;
    this.linkTimer = setTimeout(() => {
      void this.checkLink()
        .catch((error) => this.logger.error("link check failed", { error: errorText(error) }))
        .finally(() => this.scheduleLinkCheck());
    }, this.linkCheckEveryMs());
    // A check that ends while the agent stops must not keep the process up for another interval.
    this.linkTimer.unref();
  }

  /**
   * Replaces a connection that went silent without closing (a NAT that dropped its state, a dead
   * bearer): the socket stays open and nothing would tell the client. A message received since the
   * last check (a PubAck, a delta, a Hello reply) proves the link, so an agent whose reports are
   * acknowledged never pings; a silent one pings once and reconnects when no PONG comes back within
   * a third of the check interval. The leaf pings the agent likewise from its side (ping_interval).
   */
  private async checkLink(): Promise<void> {
    const nc = this.nc;
    if (!nc || !this.connected) return;
    const inMsgs = nc.stats().inMsgs;
    if (inMsgs !== this.linkInMsgs) {
      this.linkInMsgs = inMsgs;
      return;
    }
    // A slow PONG is not a dead link: with the machine overloaded (a 100,000-node connect on 2
    // cores) leaves took over 5 s, and reconnecting then made thousands of handshakes more. A
    // third of the check interval (30 s by default) is patient; a dead link is gone within two checks.
    const timeoutMs = Math.max(this.options.requestTimeoutMs ?? 5_000, this.linkCheckEveryMs() / 3);
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      nc.flush().then(
        () => true,
        () => false,
      ),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (answered || nc !== this.nc || !this.connected || this.stopping.signal.aborted) return;
    this.logger.warn("the link is silent; reconnecting", { timeoutMs });
    await nc.reconnect().catch((error) => this.logger.warn("cannot reconnect", { error: errorText(error) }));
  }

  private scheduleMetrics(first = true): void {
    clearTimeout(this.metricsTimer);
    if (this.stopping.signal.aborted) return;
    this.metricsTimer = setTimeout(
      () => {
        void this.reportMetrics().catch((error) =>
          this.logger.error("metrics report failed", { error: errorText(error) }),
        );
        this.scheduleMetrics(false);
      },
      first ? Math.random() * this.metricsMs : this.metricsMs,
    );
  }

  private async reportMetrics(): Promise<void> {
    const [host, apps] = await Promise.all([
      this.options.hostSampler.sample(),
      this.options.runtime.sampleUsage(),
    ]);
    let rtt: number | undefined;
    if (this.nc && this.connected && Date.now() - this.rttAt >= RTT_EVERY_MS) {
      // A PING/PONG round trip timed here: nc.rtt() has only millisecond resolution.
      const started = performance.now();
      rtt = await this.nc.flush().then(
        () => Math.max(1, Math.round((performance.now() - started) * 1000)),
        () => undefined,
      );
      if (rtt !== undefined) this.rttAt = Date.now();
    }
    await this.stateQueue.run(async () => {
      const seq = ++this.state.seq.mx;
      await this.options.stateStore.save(this.state);
      const payload = encodeMessage("metricsReport", {
        v: PROTOCOL_VERSION,
        seq,
        at: Date.now(),
        ...host,
        ...(rtt !== undefined ? { rtt } : {}),
        apps: apps.slice(0, 64),
        ctl: this.control.snapshot(),
      });
      await this.appendDurable("mx", seq, payload);
    });
  }

  private scheduleStatus(): void {
    clearTimeout(this.statusDebounce);
    // Debounced: a burst of transitions (several apps starting) becomes one report.
    this.statusDebounce = setTimeout(() => {
      void this.reportStatus(false).catch((error) =>
        this.logger.error("status report failed", { error: errorText(error) }),
      );
    }, STATUS_DEBOUNCE_MS);
  }

  private reportStatus(force: boolean): Promise<void> {
    return this.stateQueue.run(async () => {
      const inst = this.options.runtime.instances();
      const key = JSON.stringify(inst);
      if (!force && key === this.lastStatusKey) return;
      this.lastStatusKey = key;
      // The sequence is saved before the report is buffered: a crash can skip a number, never reuse one.
      const seq = ++this.state.seq.st;
      await this.options.stateStore.save(this.state);
      await this.appendDurable(
        "st",
        seq,
        encodeMessage("statusReport", { v: PROTOCOL_VERSION, seq, at: Date.now(), inst }),
      );
    });
  }

  private async appendDurable(type: DurableUpType, key: number, payload: Uint8Array): Promise<void> {
    await this.options.outbox.append(type, key, payload);
    this.kickFlush();
  }

  private kickFlush(): void {
    if (this.flushing) {
      this.flushAgain = true;
      return;
    }
    this.flushing = true;
    void this.flush()
      .catch((error) => this.logger.error("outbox flush failed", { error: errorText(error) }))
      .finally(() => {
        this.flushing = false;
        if (this.flushAgain) {
          this.flushAgain = false;
          this.kickFlush();
        }
      });
  }

  /**
   * Sends buffered records strictly in order, one PubAck at a time; stops at the first failure.
   * Only once the connection's Hello is answered (see `synced`).
   */
  private async flush(): Promise<void> {
    while (this.connected && this.synced && this.js) {
      const batch = await this.options.outbox.peek(FLUSH_BATCH);
      if (batch.length === 0) return;
      for (const record of batch) {
        const js = this.js;
        if (!this.connected || !this.synced || !js) return;
        const subject = agentUpSubject(this.address, record.type);
        // No Nats-Msg-Id: EF_UP is one stream for every tenant, so a header the node chooses
        // would let any node make another's report a "duplicate" (dropped, yet acked). The
        // inventory is idempotent on the report's own sequence instead (docs/protocol.md).
        try {
          await js.publish(subject, record.payload, {
            timeout: this.options.requestTimeoutMs ?? 5_000,
            retries: 0,
          });
        } catch (error) {
          const delay = fullJitterDelay(this.flushFailures++, RETRY_POLICY);
          this.logger.warn("buffered report not delivered yet", {
            type: record.type,
            key: record.key,
            error: errorText(error),
            retryInMs: delay,
          });
          this.later(delay, () => this.kickFlush());
          return;
        }
        this.flushFailures = 0;
        if (record.type === "mx") this.metricsAckedAt = Date.now();
        // Subject, reply inbox and framing up; the PubAck (~60 bytes) down.
        this.control.sent(record.type, subject.length + record.payload.byteLength + 40 + FRAMING_BYTES);
        this.control.received(record.type, 60 + FRAMING_BYTES);
        await this.options.outbox.ack(record.index);
        this.counters.durableDelivered++;
      }
    }
  }

  // --- helpers ---------------------------------------------------------------------------------

  private reject(type: string, reason: DecodeFailureReason, detail: string): void {
    this.rejected[reason] = (this.rejected[reason] ?? 0) + 1;
    this.logger.warn("rejected message", { type, reason, detail });
  }

  private every(ms: number, task: () => Promise<void>): void {
    const timer = setInterval(() => {
      void task().catch((error) => this.logger.error("periodic task failed", { error: errorText(error) }));
    }, ms);
    this.timers.add(timer);
  }

  private later(ms: number, task: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      task();
    }, ms);
    this.timers.add(timer);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

function errorText(error: unknown): string | undefined {
  if (error === undefined || error === null) return undefined;
  return error instanceof Error ? error.message : String(error);
}
