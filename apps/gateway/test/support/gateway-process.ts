import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { freePort, waitFor } from "@edgefleet/nats-tenancy/testing";

const gatewayDir = fileURLToPath(new URL("../..", import.meta.url));
// tsx as a loader in the gateway's own node process (see spawn below); `--import tsx` as its docs say.
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

export interface ReadyzBody {
  status: string;
  dependencies: Record<string, { state: string; lastError: string | null }>;
}

/** The real gateway (`tsx src/main.ts`) as a child process on a free port. */
export class GatewayProcess {
  readonly output: string[] = [];
  private exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    readonly child: ChildProcess,
    readonly baseUrl: string,
  ) {
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding("utf8").on("data", (chunk: string) => this.output.push(chunk));
    }
    this.exit = once(child, "exit").then(([code, signal]) => ({ code, signal }));
  }

  /**
   * Starts the gateway and waits until it listens or exits. freePort's port may be taken before the
   * gateway binds it (and /readyz would then answer for someone else): then it starts on another.
   */
  static async start(env: Record<string, string>): Promise<GatewayProcess> {
    for (let attempt = 1; ; attempt++) {
      const gateway = GatewayProcess.spawn(await freePort(), env);
      const listening = await gateway.listeningOrExited();
      const portTaken = !listening && gateway.output.join("").includes("EADDRINUSE");
      if (!portTaken || attempt >= 5) return gateway;
    }
  }

  private static spawn(port: number, env: Record<string, string>): GatewayProcess {
    // `node --import tsx`: one process, so a signal reaches the gateway itself. Through tsx's CLI
    // the signal goes to a wrapper that relays it, and on a loaded machine the wrapper gave up
    // waiting for the child's answer and exited 143 itself.
    const child = spawn(process.execPath, ["--import", tsxLoader, "src/main.ts"], {
      cwd: gatewayDir,
      env: {
        PATH: process.env.PATH ?? "",
        LOG_LEVEL: "info",
        GATEWAY_HTTP_HOST: "127.0.0.1",
        GATEWAY_HTTP_PORT: String(port),
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
      // Own process group, so cleanup can kill tsx and the gateway node process it spawns together.
      detached: true,
    });
    return new GatewayProcess(child, `http://127.0.0.1:${port}`);
  }

  /** True once the gateway logs "HTTP listening", false if it exits first (output read in full). */
  private async listeningOrExited(): Promise<boolean> {
    let closed = false;
    this.child.once("close", () => {
      closed = true;
    });
    return waitFor(
      "the gateway to listen or exit",
      () => {
        if (this.output.join("").includes('"msg":"HTTP listening"')) return true;
        return closed ? false : undefined;
      },
      60_000,
    );
  }

  async get(path: string): Promise<{ status: number; text: string }> {
    const response = await fetch(`${this.baseUrl}${path}`, { signal: AbortSignal.timeout(5_000) });
    return { status: response.status, text: await response.text() };
  }

  async readyz(): Promise<{ status: number; body: ReadyzBody }> {
    const { status, text } = await this.get("/readyz");
    return { status, body: JSON.parse(text) as ReadyzBody };
  }

  /** Waits until /readyz answers the wanted status; returns that answer. */
  waitForReadyz(status: number, timeoutMs = 30_000) {
    return waitFor(
      `/readyz ${status} (gateway output:\n${this.output.join("").slice(-2_000)})`,
      async () => {
        const answer = await this.readyz();
        return answer.status === status ? answer : undefined;
      },
      timeoutMs,
    );
  }

  /** Every JSON log line written so far (non-JSON lines make this throw: logs must be structured). */
  logLines(): Array<Record<string, unknown>> {
    return this.output
      .join("")
      .split("\n")
      .filter((line) => line.trim().length > 0)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.exit;
  }

  /** Test cleanup: SIGKILL the whole group if still running, so a failed test leaves nothing behind. */
  async kill(): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined || this.child.exitCode !== null || this.child.signalCode !== null) return;
    process.kill(-pid, "SIGKILL");
    await this.exit;
  }
}

/** Value of an unlabelled-or-labelled sample in Prometheus text, e.g. `x{dependency="nats"}`. */
export function metricValue(metricsText: string, series: string): number | undefined {
  const line = metricsText.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
