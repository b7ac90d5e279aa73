import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEnrollmentToken, type Db, setDesiredApps } from "@edgefleet/db";
import { REPO_ROOT } from "./stack.js";

/**
 * The reference agent CLI (`edgefleet-agent run`, process runtime, one desired `sleep` app) against
 * the benchmark's stack; its RSS sampled once a second, like packages/agent-sdk's measure:rss
 * script does against a stand-in platform.
 */
export interface ReferenceAgentResult {
  variant: string;
  rssMiBLast: number;
  rssMiBMax: number;
  /** At the last sample: heaps and stacks vs file-backed pages (the node binary's code, shared
   * with every other Node process and reclaimable), and PSS. */
  anonymousMiB?: number;
  fileBackedMiB?: number;
  pssMiB?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Builds the agent bundle from the current source (a stale dist/ would measure old code). */
export function buildAgentBundle(): boolean {
  const sdk = join(REPO_ROOT, "packages/agent-sdk");
  return (
    spawnSync(process.execPath, [join(sdk, "scripts/bundle.mjs")], { cwd: sdk, stdio: "ignore" }).status === 0
  );
}

export function referenceAgentEntries(): Array<{ variant: string; entry: string }> {
  const sdk = join(REPO_ROOT, "packages/agent-sdk");
  const entries = [{ variant: "tsx", entry: join(sdk, "bin/edgefleet-agent.mjs") }];
  const bundle = join(sdk, "dist/edgefleet-agent.mjs");
  // The bundle is what a node runs (minified, executable, Node flags in its shebang); it exists
  // after `pnpm --filter @edgefleet/agent-sdk bundle`.
  if (existsSync(bundle)) entries.unshift({ variant: "bundle", entry: bundle });
  return entries;
}

export async function measureReferenceAgent(options: {
  db: Db;
  organizationId: string;
  appVersionId: string;
  natsUrl: string;
  enrollCredsFile: string;
  variant: string;
  entry: string;
  seconds: number;
  logFile: string;
}): Promise<ReferenceAgentResult> {
  const { db, organizationId } = options;
  const dir = await mkdtemp(join(tmpdir(), "ef-bench-agent-"));
  const name = `reference-agent-${options.variant}`;
  const { token } = await createEnrollmentToken(db, organizationId, {
    expiresAt: new Date(Date.now() + 600_000),
    maxUses: 1,
    description: "benchmark: reference agent",
  });
  const config = join(dir, "agent.yaml");
  await writeFile(
    config,
    [
      `stateDir: ${join(dir, "state")}`,
      `servers: ["${options.natsUrl}"]`,
      "enroll:",
      `  credsFile: ${options.enrollCredsFile}`,
      `  token: ${token}`,
      `  name: ${name}`,
    ].join("\n"),
  );
  const log = openSync(options.logFile, "w");
  // The bundle runs as the executable a node runs (its shebang carries the Node flags); the tsx
  // entry through this Node. Own process group: its app processes go down with it whatever happens.
  const [command, args] =
    options.variant === "bundle"
      ? [options.entry, ["run", "--config", config]]
      : [process.execPath, [options.entry, "run", "--config", config]];
  const agent = spawn(command, args, { stdio: ["ignore", log, log], detached: true });
  closeSync(log);
  const exited = new Promise((resolve) => agent.once("exit", resolve));
  try {
    const until = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (agent.exitCode !== null) throw new Error(`reference agent exited (log: ${options.logFile})`);
        const value = await probe();
        if (value !== undefined) return value;
        await sleep(500);
      }
      throw new Error(`reference agent: ${what} not within ${timeoutMs / 1000} s (log: ${options.logFile})`);
    };
    const node = await until(
      "online",
      async () =>
        (await db.node.findFirst({ where: { organizationId, name, status: "online" } })) ?? undefined,
    );
    // A starved machine can run the transaction past Prisma's 5 s limit: try again.
    for (let attempt = 1; ; attempt++) {
      try {
        await setDesiredApps(db, organizationId, node.id, { put: [options.appVersionId] });
        break;
      } catch (error) {
        if (attempt >= 5) throw error;
        await sleep(1_000);
      }
    }
    await until(
      "app running",
      async () =>
        (await db.appInstance.findFirst({ where: { nodeId: node.id, state: "running" } })) ?? undefined,
    );
    const samples: number[] = [];
    let rollup = "";
    for (let second = 0; second < options.seconds; second++) {
      await sleep(1_000);
      const status = await readFile(`/proc/${agent.pid}/status`, "utf8").catch(() => "");
      const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
      if (kib > 0) samples.push(kib / 1024);
      rollup = await readFile(`/proc/${agent.pid}/smaps_rollup`, "utf8").catch(() => rollup);
    }
    if (samples.length === 0) throw new Error("reference agent: no RSS samples");
    const field = (name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? 0) / 1024;
    return {
      variant: options.variant,
      rssMiBLast: samples.at(-1) as number,
      rssMiBMax: Math.max(...samples),
      ...(rollup
        ? {
            anonymousMiB: field("Anonymous"),
            fileBackedMiB: field("Rss") - field("Anonymous"),
            pssMiB: field("Pss"),
          }
        : {}),
    };
  } finally {
    if (agent.exitCode === null && agent.pid !== undefined) {
      process.kill(-agent.pid, "SIGTERM");
      const timer = setTimeout(() => agent.pid && process.kill(-agent.pid, "SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    try {
      if (agent.pid) process.kill(-agent.pid, "SIGKILL");
    } catch {
      // the group is gone
    }
    await rm(dir, { recursive: true, force: true });
  }
}

/** An empty Node process (same Node, no code) for a few seconds: the floor any Node agent sits on. */
export async function measureEmptyNode(): Promise<{
  rssMiB: number;
  anonymousMiB: number;
  fileBackedMiB: number;
}> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  try {
    await sleep(3_000);
    const rollup = await readFile(`/proc/${child.pid}/smaps_rollup`, "utf8");
    const field = (name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? 0) / 1024;
    return {
      rssMiB: field("Rss"),
      anonymousMiB: field("Anonymous"),
      fileBackedMiB: field("Rss") - field("Anonymous"),
    };
  } finally {
    child.kill("SIGKILL");
  }
}
