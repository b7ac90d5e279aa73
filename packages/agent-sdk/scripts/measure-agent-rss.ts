/**
 * Measures the reference agent's resident memory: a private nats-server (NATS_URL, no auth, with an
 * EF_UP stream), stand-ins for the gateway's enroll and Hello handling, and the agent CLI running
 * one desired app. Prints RSS samples of the agent process as JSON.
 *
 *   tsx scripts/measure-agent-rss.ts [--bundle] [--seconds 60] [--node-arg=--lite-mode]…
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { EnrollResponder } from "../test/support/enroll-responder.js";
import { TestPlatform } from "../test/support/platform.js";

const { values } = parseArgs({
  options: {
    bundle: { type: "boolean", default: false },
    seconds: { type: "string", default: "60" },
    "node-arg": { type: "string", multiple: true, default: [] },
  },
});
const natsUrl = process.env.NATS_URL;
if (!natsUrl) throw new Error("NATS_URL is required (a private no-auth nats-server with JetStream)");

const nc = await connect({ servers: natsUrl });
const jsm = await jetstreamManager(nc);
await jsm.streams
  .add({ name: "EF_UP", subjects: ["ef.up.*.*.st", "ef.up.*.*.mx", "ef.up.*.*.ack"] })
  .catch(() => undefined);
const responder = new EnrollResponder(nc);
responder.start();
const platform = new TestPlatform(nc, { hb: 30, mx: 10 });
platform.start();
platform.record("n0", { put: { app: "idle", ver: "1", spec: { command: ["sleep", "100000"] } } });

const dir = await mkdtemp(join(tmpdir(), "agent-rss-"));
const config = join(dir, "agent.yaml");
await writeFile(
  config,
  `stateDir: ./state\nservers: ["${natsUrl}"]\nenroll: { token: approve-me, name: rss }\n`,
);
const packageDir = new URL("..", import.meta.url).pathname;
const entry = values.bundle
  ? join(packageDir, "dist/edgefleet-agent.mjs")
  : join(packageDir, "bin/edgefleet-agent.mjs");
// The bundle runs as the executable it is (its shebang carries the Node flags a node uses);
// --node-arg runs it under this Node with those flags instead.
const nodeArgs = values["node-arg"] ?? [];
const [command, args] =
  values.bundle && nodeArgs.length === 0
    ? [entry, ["run", "--config", config]]
    : [process.execPath, [...nodeArgs, entry, "run", "--config", config]];
const agent = spawn(command, args, { stdio: ["ignore", "ignore", "inherit"] });

const samples: number[] = [];
/** Where the resident memory is at the last sample: file-backed (code: the node binary, shared
 * libraries; shared with other processes and reclaimable) vs anonymous (heaps, stacks). */
let breakdown: Record<string, number> = {};
const seconds = Number(values.seconds);
for (let second = 0; second < seconds; second++) {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const status = await readFile(`/proc/${agent.pid}/status`, "utf8").catch(() => "");
  const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
  if (kib > 0) samples.push(kib);
  const rollup = await readFile(`/proc/${agent.pid}/smaps_rollup`, "utf8").catch(() => "");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? 0);
  if (rollup)
    breakdown = {
      anonymousMiB: field("Anonymous") / 1024,
      fileBackedMiB: (field("Rss") - field("Anonymous")) / 1024,
      pssMiB: field("Pss") / 1024,
    };
}
agent.kill("SIGTERM");
await new Promise((resolve) => agent.once("exit", resolve));
responder.stop();
platform.stop();
await nc.close();
await rm(dir, { recursive: true, force: true });
const mib = (kib: number) => Math.round((kib / 1024) * 10) / 10;
process.stdout.write(
  `${JSON.stringify({ entry: values.bundle ? "bundle" : "tsx", seconds, rssMiB: { last: mib(samples.at(-1) ?? 0), max: mib(Math.max(...samples)) }, ...Object.fromEntries(Object.entries(breakdown).map(([key, value]) => [key, Math.round(value * 10) / 10])) })}\n`,
);
