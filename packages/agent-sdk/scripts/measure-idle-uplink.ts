/**
 * Idle uplink of one reference agent counted at the NATS server: a private nats-server with
 * monitoring (NATS_SERVER_BIN), stand-ins for Hello/enroll, one agent with one idle app, and the
 * server's /connz byte counters for the agent's connection over a window.
 *
 *   tsx scripts/measure-idle-uplink.ts [--minutes 3] [--hb 60] [--mx 60] [--rq]
 *
 * --rq: the HelloReply says reports quiet the heartbeat, as the gateway's does.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startTestAgent } from "../test/support/agent-fixture.js";
import { EnrollResponder } from "../test/support/enroll-responder.js";
import { connectPlatform, createUpStream, startTestNats } from "../test/support/nats-server.js";
import { TestPlatform } from "../test/support/platform.js";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "3" },
    hb: { type: "string", default: "60" },
    mx: { type: "string", default: "60" },
    rq: { type: "boolean", default: false },
  },
});
const server = await startTestNats();
const nc = await connectPlatform(server);
await createUpStream(nc);
const responder = new EnrollResponder(nc);
responder.start();
const platform = new TestPlatform(nc, { hb: Number(values.hb), mx: Number(values.mx), rq: values.rq });
platform.start();
platform.record("n0", { put: { app: "idle", ver: "1", spec: { command: ["sleep", "100000"] } } });
const stateDir = await mkdtemp(join(tmpdir(), "agent-idle-"));
const { agent } = await startTestAgent(stateDir, [server.url], "n0", {
  heartbeatSeconds: Number(values.hb),
  metricsSeconds: Number(values.mx),
  name: "idle-agent",
});

interface Connz {
  connections: Array<{ name?: string; in_bytes: number; out_bytes: number; in_msgs: number }>;
}
async function counters() {
  const response = await fetch(`${server.monitorUrl}/connz`);
  const connection = ((await response.json()) as Connz).connections.find(
    (entry) => entry.name === "idle-agent",
  );
  if (!connection) throw new Error("agent connection not found in /connz");
  return connection;
}
// Skip start-up traffic (Hello, first status) and measure steady state.
await new Promise((resolve) => setTimeout(resolve, 5_000));
const before = await counters();
const windowMs = Number(values.minutes) * 60_000;
await new Promise((resolve) => setTimeout(resolve, windowMs));
const after = await counters();
const uplinkPerMinute = ((after.in_bytes - before.in_bytes) * 60_000) / windowMs;
const downlinkPerMinute = ((after.out_bytes - before.out_bytes) * 60_000) / windowMs;
process.stdout.write(
  `${JSON.stringify({
    hbSeconds: Number(values.hb),
    mxSeconds: Number(values.mx),
    uplinkBytesPerMinute: Math.round(uplinkPerMinute),
    uplinkKbitPerSecond: Number(((uplinkPerMinute * 8) / 60 / 1000).toFixed(4)),
    downlinkBytesPerMinute: Math.round(downlinkPerMinute),
    messagesPerMinute: ((after.in_msgs - before.in_msgs) * 60_000) / windowMs,
  })}\n`,
);
await agent.stop(1_000);
responder.stop();
platform.stop();
await nc.close();
await server.stop();
await rm(stateDir, { recursive: true, force: true });
