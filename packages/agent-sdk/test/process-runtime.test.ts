import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InstanceStatus } from "../src/protocol/index.js";
import { ProcessRuntime } from "../src/runtime/process.js";
import { sleep, waitFor } from "../src/testing.js";
import { isAlive } from "./support/is-alive.js";

const node = process.execPath;
let dir: string;
let runtime: ProcessRuntime;
let transitions: InstanceStatus[][];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-sdk-runtime-"));
  runtime = new ProcessRuntime({
    appsDir: dir,
    restartBackoff: { minMs: 200, maxMs: 1_600, stableAfterMs: 60_000 },
  });
  transitions = [];
  runtime.onChange(() => transitions.push(runtime.instances()));
});

afterEach(async () => {
  await runtime.shutdown();
  await rm(dir, { recursive: true, force: true });
});

function instance(app: string): InstanceStatus | undefined {
  return runtime.instances().find((candidate) => candidate.app === app);
}

function waitForState(app: string, state: InstanceStatus["st"], timeoutMs?: number) {
  return waitFor(
    `${app} ${state} (now ${JSON.stringify(instance(app))})`,
    () => (instance(app)?.st === state ? instance(app) : undefined),
    timeoutMs,
  );
}

async function readPid(path: string): Promise<number> {
  return waitFor(`pid in ${path}`, async () => {
    const text = await readFile(path, "utf8").catch(() => "");
    return text.trim() ? Number(text.trim()) : undefined;
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

describe("process runtime", () => {
  it("really starts an app, reports pending → starting → running, and stops it with SIGTERM", async () => {
    const pidFile = join(dir, "pid");
    runtime.put("web", "1.0.0", {
      command: [
        node,
        "-e",
        `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`,
      ],
    });
    expect(instance("web")).toEqual({ app: "web", st: "pending", rs: 0 });
    await waitForState("web", "running");
    const pid = await readPid(pidFile);
    expect(isAlive(pid)).toBe(true);
    expect(instance("web")).toEqual({ app: "web", ver: "1.0.0", st: "running", rs: 0 });
    expect(transitions.map((snapshot) => snapshot[0]?.st)).toEqual(["pending", "starting", "running"]);

    runtime.remove("web");
    await waitFor("web gone from the snapshot", () => (instance("web") === undefined ? true : undefined));
    expect(isAlive(pid)).toBe(false);
    expect(transitions.map((snapshot) => snapshot[0]?.st ?? "gone").slice(-2)).toEqual(["stopped", "gone"]);
  });

  it("passes env and working directory, and re-putting the same version is a no-op", async () => {
    const out = join(dir, "env.json");
    const spec = {
      command: [
        node,
        "-e",
        `require("fs").writeFileSync(${JSON.stringify(out)}, JSON.stringify({ cwd: process.cwd(), greeting: process.env.GREETING, app: process.env.EDGEFLEET_APP })); setInterval(() => {}, 1000)`,
      ],
      env: { GREETING: "hello" },
      cwd: dir,
    };
    runtime.put("envy", "1", spec);
    await waitForState("envy", "running");
    const written = await waitFor("env file", async () => readFile(out, "utf8").catch(() => undefined));
    expect(JSON.parse(written)).toEqual({ cwd: dir, greeting: "hello", app: "envy" });
    const count = transitions.length;
    runtime.put("envy", "1", structuredClone(spec));
    await sleep(300);
    expect(transitions.length).toBe(count);
  });

  it("replaces a version: the old process exits before the new one starts", async () => {
    const log = join(dir, "versions.log");
    const spec = (version: string) => ({
      command: [
        node,
        "-e",
        `const fs = require("fs"); fs.appendFileSync(${JSON.stringify(log)}, "start ${version}\\n"); process.on("SIGTERM", () => { fs.appendFileSync(${JSON.stringify(log)}, "stop ${version}\\n"); process.exit(0); }); setInterval(() => {}, 1000)`,
      ],
    });
    runtime.put("svc", "1", spec("1"));
    await waitForState("svc", "running");
    await waitFor("v1 started", async () =>
      (await readFile(log, "utf8")).includes("start 1") ? true : undefined,
    );
    runtime.put("svc", "2", spec("2"));
    await waitFor("v2 running", () =>
      instance("svc")?.ver === "2" && instance("svc")?.st === "running" ? true : undefined,
    );
    await waitFor("v2 log", async () =>
      (await readFile(log, "utf8")).includes("start 2") ? true : undefined,
    );
    expect((await readFile(log, "utf8")).trim().split("\n")).toEqual(["start 1", "stop 1", "start 2"]);
  });

  it("restarts a crashing app with exponential backoff and reports failed with the reason", async () => {
    const starts = join(dir, "starts.log");
    runtime.put("crashy", "1", {
      command: [
        node,
        "-e",
        `require("fs").appendFileSync(${JSON.stringify(starts)}, Date.now() + "\\n"); process.exit(3)`,
      ],
    });
    await waitFor("4 restarts", () => ((instance("crashy")?.rs ?? 0) >= 4 ? true : undefined));
    expect(
      transitions.some(
        (snapshot) => snapshot[0]?.st === "failed" && snapshot[0].why === "exited with code 3",
      ),
    ).toBe(true);
    const times = (await readFile(starts, "utf8")).trim().split("\n").map(Number);
    const gaps = times.slice(1).map((time, i) => time - (times[i] as number));
    // Backoff 200, 400, 800, 1600 ms (plus process start time): each gap clearly longer than the last.
    expect(gaps[0]).toBeGreaterThanOrEqual(200);
    expect(gaps[1]).toBeGreaterThanOrEqual(400);
    expect(gaps[2]).toBeGreaterThanOrEqual(800);
    expect(gaps[2] as number).toBeGreaterThan((gaps[0] as number) * 2);
  });

  it("does not restart under restart policy never", async () => {
    runtime.put("once", "1", { command: [node, "-e", "process.exit(5)"], restart: "never" });
    await waitForState("once", "failed");
    await sleep(600);
    expect(instance("once")).toEqual({
      app: "once",
      ver: "1",
      st: "failed",
      why: "exited with code 5",
      rs: 0,
    });
  });

  it("reports a program that cannot be started", async () => {
    runtime.put("ghost", "1", { command: [join(dir, "no-such-program")], restart: "never" });
    const failed = await waitForState("ghost", "failed");
    expect(failed.why).toMatch(/^cannot start: spawn .*no-such-program ENOENT/);
  });

  it("stays starting until an exec health check passes, then runs", async () => {
    runtime.put("slow", "1", {
      command: [
        node,
        "-e",
        `setTimeout(() => require("fs").writeFileSync("ready", "1"), 1500); setInterval(() => {}, 1000)`,
      ],
      health: {
        exec: [node, "-e", `process.exit(require("fs").existsSync("ready") ? 0 : 1)`],
        intervalSeconds: 1,
        failureThreshold: 10,
      },
    });
    await waitForState("slow", "starting");
    await sleep(1_000);
    expect(instance("slow")?.st).toBe("starting");
    await waitForState("slow", "running");
  });

  it("runs on a passing HTTP health check and restarts the app when it keeps failing", async () => {
    const port = await freePort();
    const healthyFile = join(dir, "healthy");
    await writeFile(healthyFile, "yes");
    runtime.put("http", "1", {
      command: [
        node,
        "-e",
        `require("http").createServer((req, res) => { const ok = require("fs").readFileSync(${JSON.stringify(healthyFile)}, "utf8") === "yes"; res.writeHead(ok ? 200 : 503); res.end(); }).listen(${port}, "127.0.0.1")`,
      ],
      health: { http: `http://127.0.0.1:${port}/healthz`, intervalSeconds: 1, failureThreshold: 2 },
    });
    await waitForState("http", "running");
    await writeFile(healthyFile, "no");
    await waitFor("restart after failed health checks", () =>
      (instance("http")?.rs ?? 0) >= 1 ? true : undefined,
    );
    const failure = transitions.map((snapshot) => snapshot[0]).find((status) => status?.st === "failed");
    expect(failure?.why).toBe(`health check failed 2 times: GET http://127.0.0.1:${port}/healthz: HTTP 503`);
    await writeFile(healthyFile, "yes");
    await waitForState("http", "running");
  });

  it("SIGKILLs an app that ignores SIGTERM after the grace period, leaving no orphans", async () => {
    const pidFile = join(dir, "pids");
    runtime.put("stubborn", "1", {
      command: [
        node,
        "-e",
        `const child = require("child_process").spawn("sleep", ["1000"], { stdio: "ignore" }); require("fs").writeFileSync(${JSON.stringify(pidFile)}, process.pid + " " + child.pid); process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)`,
      ],
      stopGraceSeconds: 1,
    });
    await waitForState("stubborn", "running");
    const [appPid, sleepPid] = await waitFor("both pids", async () => {
      const pids = (await readFile(pidFile, "utf8").catch(() => "")).trim().split(" ").map(Number);
      return pids.length === 2 ? pids : undefined;
    });
    await sleep(200);
    const started = Date.now();
    await runtime.shutdown();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(5_000);
    expect(isAlive(appPid as number)).toBe(false);
    await waitFor("grandchild gone", () => (isAlive(sleepPid as number) ? undefined : true), 3_000);
    expect(instance("stubborn")?.st).toBe("stopped");
  });

  it("shutdown stops every app and refuses new ones", async () => {
    runtime.put("a", "1", { command: ["sleep", "1000"] });
    runtime.put("b", "1", { command: ["sleep", "1000"] });
    await waitForState("a", "running");
    await waitForState("b", "running");
    const usage = await runtime.sampleUsage();
    expect(usage.map((entry) => entry.app).sort()).toEqual(["a", "b"]);
    expect(usage.every((entry) => entry.mem > 0)).toBe(true);
    await runtime.shutdown();
    expect(runtime.instances().map((status) => status.st)).toEqual(["stopped", "stopped"]);
    runtime.put("c", "1", { command: ["sleep", "1000"] });
    expect(instance("c")).toBeUndefined();
  });
});
