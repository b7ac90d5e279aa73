import { type ChildProcess, fork, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { NodeDeliveries } from "./delivery-ledger.js";
import type { BehaviourTable } from "./rollout/gates/behaviour.js";
import type { EnrollCommand, FromWorker, NodeTime, NodeUpdates, ToWorker } from "./worker-protocol.js";

/**
 * The driver's side of the hollow-agent worker processes: Node workers (hollow-worker.ts, over
 * Node IPC) or the native agent's hollow mode (`edgefleet-agent hollow --control stdio`, the same
 * messages as JSON lines on stdin/stdout; apps/agent/hollow/control).
 */

type Reply<T extends FromWorker["type"]> = Extract<FromWorker, { type: T }>;

/** How the driver reaches one worker process. */
interface Link {
  send(command: ToWorker): void;
  /** Whether a command can still reach the process. */
  open(): boolean;
}

function ipcLink(child: ChildProcess, onMessage: (message: FromWorker) => void): Link {
  child.on("message", onMessage);
  return { send: (command) => child.send(command), open: () => child.connected };
}

/** JSON lines on the child's stdin and stdout; a line that is not JSON fails the worker. */
function stdioLink(child: ChildProcess, onMessage: (message: FromWorker) => void): Link {
  const { stdin, stdout } = child;
  if (!stdin || !stdout) throw new Error("the worker process has no stdin/stdout pipes");
  createInterface({ input: stdout }).on("line", (line) => {
    if (!line.trim()) return;
    let message: FromWorker;
    try {
      message = JSON.parse(line) as FromWorker;
    } catch {
      message = { type: "error", message: `not a JSON message: ${line.slice(0, 200)}` };
    }
    onMessage(message);
  });
  // Writing to a process that died fails with EPIPE: its exit is what the driver reports.
  stdin.on("error", () => undefined);
  return {
    send: (command) => stdin.write(`${JSON.stringify(command)}\n`),
    open: () => stdin.writable && child.exitCode === null && child.signalCode === null,
  };
}

class Worker {
  readonly progress = { enrolled: 0, started: 0, connected: 0, backlog: 0, delivered: 0 };
  readonly nids = new Set<string>();
  private readonly waiters = new Map<string, (message: FromWorker) => void>();
  private failure: Error | undefined;
  private readonly link: Link;
  readonly exited: Promise<void>;

  constructor(
    readonly index: number,
    readonly child: ChildProcess,
    connect: (child: ChildProcess, onMessage: (message: FromWorker) => void) => Link,
    label = "hollow worker",
  ) {
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
    this.link = connect(child, (message) => {
      if (message.type === "progress") Object.assign(this.progress, message);
      else if (message.type === "error") this.fail(new Error(`${label} ${index}: ${message.message}`));
      const waiter = this.waiters.get(message.type);
      if (waiter) {
        this.waiters.delete(message.type);
        waiter(message);
      }
    });
    child.once("exit", (code, signal) => {
      if (!this.stopping) this.fail(new Error(`${label} ${index} exited (code ${code}, signal ${signal})`));
    });
    child.once("error", (error) => this.fail(new Error(`${label} ${index}: ${error.message}`)));
  }

  stopping = false;

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.waiters.values()) waiter({ type: "error", message: error.message });
    this.waiters.clear();
  }

  /** Sends a command and waits for the reply of type `reply` (or the worker's failure). */
  request<T extends FromWorker["type"]>(command: ToWorker | null, reply: T): Promise<Reply<T>> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiters.set(reply, (message) => {
        if (message.type === reply) resolve(message as Reply<T>);
        else reject(this.failure ?? new Error(message.type === "error" ? message.message : "worker failed"));
      });
      if (command) this.link.send(command);
    });
  }

  /** Asks the process to stop its agents and exit (idempotent). */
  shutdown(): void {
    this.stopping = true;
    if (this.link.open()) this.link.send({ type: "shutdown" });
  }
}

export class WorkerPool {
  private constructor(readonly workers: Worker[]) {}

  /** `cpuProfileDir`: each worker writes a V8 CPU profile there when it exits (--cpu-prof). */
  static async start(count: number, logDir: string, cpuProfileDir?: string): Promise<WorkerPool> {
    const workers = Array.from({ length: count }, (_, index) => {
      const log = openSync(join(logDir, `bench-hollow-${index}.log`), "w");
      // fork() passes our execArgv on: the tsx loader we run under loads the worker's TypeScript.
      const child = fork(join(import.meta.dirname, "hollow-worker.ts"), [], {
        stdio: ["ignore", log, log, "ipc"],
        execArgv: cpuProfileDir
          ? [...process.execArgv, "--cpu-prof", `--cpu-prof-dir=${cpuProfileDir}`]
          : process.execArgv,
      });
      closeSync(log);
      return new Worker(index, child, ipcLink);
    });
    return WorkerPool.ready(workers);
  }

  /**
   * `count` processes of the native agent's hollow mode (`binary`: apps/agent/build.sh's), each
   * holding its share of the nodes as goroutines: ~126 KiB per node against ~342 KiB in Node.
   * `env` adds to the environment (the scale scenario's GOMEMLIMIT).
   */
  static async startGo(
    count: number,
    logDir: string,
    binary: string,
    env: Record<string, string> = {},
  ): Promise<WorkerPool> {
    const workers = Array.from({ length: count }, (_, index) => {
      const log = openSync(join(logDir, `bench-hollow-go-${index}.log`), "w");
      const child = spawn(binary, ["hollow", "--control", "stdio"], {
        stdio: ["pipe", "pipe", log],
        env: { ...process.env, ...env },
      });
      closeSync(log);
      return new Worker(index, child, stdioLink, "Go hollow worker");
    });
    return WorkerPool.ready(workers);
  }

  /** The pool once every worker said "ready"; on a failure, stops them all. */
  private static async ready(workers: Worker[]): Promise<WorkerPool> {
    const pool = new WorkerPool(workers);
    try {
      await Promise.all(workers.map((worker) => worker.request(null, "ready")));
    } catch (error) {
      await pool.stop();
      throw error;
    }
    return pool;
  }

  pids(): number[] {
    return this.workers.flatMap((worker) =>
      worker.child.pid && worker.child.exitCode === null ? [worker.child.pid] : [],
    );
  }

  totals() {
    const sum = { enrolled: 0, started: 0, connected: 0 };
    for (const worker of this.workers) {
      sum.enrolled += worker.progress.enrolled;
      sum.started += worker.progress.started;
      sum.connected += worker.progress.connected;
    }
    return sum;
  }

  /**
   * Enrolls with one command per worker (worker i gets `commands[i]`: its own token, site leaf and
   * share of the names); returns every enrolled node, per worker.
   */
  async enrollEach(commands: ReadonlyArray<Omit<EnrollCommand, "type">>) {
    if (commands.length !== this.workers.length)
      throw new Error(`${commands.length} enroll commands for ${this.workers.length} workers`);
    const replies = await Promise.all(
      this.workers.map((worker, index) =>
        worker
          .request({ type: "enroll", ...(commands[index] as Omit<EnrollCommand, "type">) }, "enrolled")
          .then((reply) => {
            for (const node of reply.nodes) worker.nids.add(node.nid);
            return reply;
          }),
      ),
    );
    return {
      perWorker: replies.map((reply) => reply.nodes),
      failures: replies.reduce((sum, reply) => sum + reply.failures, 0),
      firstError: replies.find((reply) => reply.firstError)?.firstError,
    };
  }

  /** Enrolls `nodes` split evenly over the workers; returns every enrolled node. */
  async enroll(nodes: number, base: Omit<EnrollCommand, "type" | "firstIndex" | "count">) {
    const share = Math.ceil(nodes / this.workers.length);
    const replies = await Promise.all(
      this.workers.map((worker) => {
        const firstIndex = worker.index * share;
        const count = Math.max(0, Math.min(share, nodes - firstIndex));
        return worker.request({ type: "enroll", firstIndex, count, ...base }, "enrolled").then((reply) => {
          for (const node of reply.nodes) worker.nids.add(node.nid);
          return reply;
        });
      }),
    );
    return {
      nodes: replies.flatMap((reply) => reply.nodes),
      failures: replies.reduce((sum, reply) => sum + reply.failures, 0),
      firstError: replies.find((reply) => reply.firstError)?.firstError,
    };
  }

  async connect(perSecond: number, maxInFlightPerWorker: number): Promise<NodeTime[]> {
    const perWorker = perSecond / this.workers.length;
    const replies = await Promise.all(
      this.workers.map((worker) =>
        worker.request(
          { type: "connect", perSecond: perWorker, maxInFlight: maxInFlightPerWorker },
          "started",
        ),
      ),
    );
    return replies.flatMap((reply) => reply.nodes);
  }

  private async each(nids: readonly string[], type: "stop" | "restart") {
    const reply = type === "stop" ? "stopped" : "restarted";
    const replies = await Promise.all(
      this.workers.map((worker) =>
        worker.request({ type, nids: nids.filter((nid) => worker.nids.has(nid)) }, reply),
      ),
    );
    return replies.flatMap((answer) => answer.nodes);
  }

  stopAgents(nids: readonly string[]): Promise<NodeTime[]> {
    return this.each(nids, "stop");
  }

  restartAgents(nids: readonly string[]): Promise<NodeTime[]> {
    return this.each(nids, "restart");
  }

  /** Starts watching for each running agent's next answered Hello; resolves when all have one. */
  async watchHellos(
    timeoutMs: number,
    nids?: readonly string[],
  ): Promise<{ nodes: NodeTime[]; watched: number }> {
    const replies = await Promise.all(
      this.workers.map((worker) =>
        worker.request(
          {
            type: "watch-hellos",
            timeoutMs,
            ...(nids ? { nids: nids.filter((nid) => worker.nids.has(nid)) } : {}),
          },
          "hellos",
        ),
      ),
    );
    return {
      nodes: replies.flatMap((reply) => reply.nodes),
      watched: replies.reduce((sum, reply) => sum + reply.watched, 0),
    };
  }

  /** Tells every worker what each version label does (rollout/gates/behaviour.ts). */
  async setBehaviours(table: BehaviourTable): Promise<void> {
    await Promise.all(
      this.workers.map((worker) => worker.request({ type: "behaviours", table }, "behaviours-set")),
    );
  }

  /** Per node, the version switches its runtime was told to make (see CountingHollowRuntime). */
  async updates(): Promise<NodeUpdates[]> {
    const replies = await Promise.all(
      this.workers.map((worker) => worker.request({ type: "updates" }, "updates")),
    );
    return replies.flatMap((reply) => reply.nodes);
  }

  /** Per node, every report whose PubAck its agent got (delivery-ledger.ts). */
  async deliveries(): Promise<NodeDeliveries[]> {
    const replies = await Promise.all(
      this.workers.map((worker) => worker.request({ type: "deliveries" }, "deliveries")),
    );
    return replies.flatMap((reply) => reply.nodes);
  }

  /** Each worker's latest progress (sent every second): agents connected, backlog, delivered. */
  progressOf(index: number) {
    const worker = this.workers[index];
    if (!worker) throw new Error(`no hollow worker ${index}`);
    return { ...worker.progress };
  }

  /** Asks each worker to stop its agents and exit; kills it after `graceMs`. Idempotent. */
  async stop(graceMs = 20_000): Promise<void> {
    await Promise.all(
      this.workers.map(async (worker) => {
        const { pid, exitCode, signalCode } = worker.child;
        if (pid === undefined || exitCode !== null || signalCode !== null) return;
        worker.shutdown();
        const timer = setTimeout(() => worker.child.kill("SIGKILL"), graceMs);
        await worker.exited;
        clearTimeout(timer);
      }),
    );
  }
}
