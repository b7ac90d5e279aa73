// The local demo of `./edgefleet up` (scripts/stack/services.sh). Never used in production.
//   demo prepare                       upload the demo versions' artifacts (every profile)
//   demo prepare --live --dir <dir> --leaf-port-base <port>
//                                      also write the live fleet: one leaf.conf per site and
//                                      fleet.json for `edgefleet-agent hollow --nodes`; prints
//                                      `leaf <name> <config path>` per site for the script to run
//   demo rollouts [--timeout-seconds 60]
//                                      wait for the fleet, start the demo rollouts (once), and
//                                      wait until they settle (finished / awaiting approval)
// Reads the gateway's environment (stack.env).
import { parseArgs } from "node:util";
import { createPrismaClient } from "@edgefleet/db";
import { uploadDemoArtifacts } from "../demo/artifacts.js";
import { prepareDemoFleet } from "../demo/fleet.js";
import { demoNodesNotOnline, pollUntil, startDemoRollouts } from "../demo/rollouts.js";
import { createEnrollment, enrollmentConfigFromEnv } from "../enrollment/index.js";
import { loadGatewayEnvOrExit } from "../env.js";
import { createLogger } from "../logger.js";
import { createGatewayMetrics } from "../metrics.js";

const USAGE =
  "usage: demo prepare [--live --dir <dir> --leaf-port-base <port>] | demo rollouts [--timeout-seconds 60]\n";
const [command, ...rest] = process.argv.slice(2);
const { values } = parseArgs({
  args: rest,
  options: {
    live: { type: "boolean", default: false },
    dir: { type: "string" },
    "leaf-port-base": { type: "string" },
    "timeout-seconds": { type: "string", default: "60" },
  },
});
if (command !== "prepare" && command !== "rollouts") {
  process.stderr.write(USAGE);
  process.exit(2);
}
const env = loadGatewayEnvOrExit();
const db = createPrismaClient(env.DATABASE_URL);
const say = (line: string) => process.stdout.write(`${line}\n`);

async function prepare() {
  if (!env.GATEWAY_INTERNAL_TOKEN) throw new Error("GATEWAY_INTERNAL_TOKEN must be set (the gateway's internal API)");
  const artifacts = await uploadDemoArtifacts(db, {
    url: `http://127.0.0.1:${env.GATEWAY_HTTP_PORT}`,
    token: env.GATEWAY_INTERNAL_TOKEN,
  });
  const uploaded = artifacts.filter((a) => a.outcome === "uploaded").length;
  say(`artifacts ${artifacts.length} ready (${uploaded} uploaded now)`);
  if (!values.live) return;

  const port = Number(values["leaf-port-base"]);
  if (!values.dir || !Number.isInteger(port) || port < 1 || port > 65_000) {
    throw new Error("--live needs --dir <dir> and --leaf-port-base <port>");
  }
  const config = enrollmentConfigFromEnv(env);
  if (!config || !env.NATS_LEAF_URL) {
    throw new Error("NATS_TENANCY_FILE, NATS_SYSTEM_CREDS and NATS_LEAF_URL must be set (the gateway's NATS secrets)");
  }
  const enrollment = createEnrollment(db, config, createLogger("warn"), createGatewayMetrics().registry);
  try {
    const fleet = await prepareDemoFleet(db, enrollment, {
      dir: values.dir,
      leafPortBase: port,
      hubLeafUrls: env.NATS_LEAF_URL,
      hubUrls: env.NATS_URL,
    });
    for (const leaf of fleet.leaves) say(`leaf ${leaf.name} ${leaf.configPath}`);
    say(`fleet ${fleet.nodes} ${fleet.nodesFile}`);
  } finally {
    await enrollment.stop();
  }
}

async function rollouts() {
  const timeoutMs = Number(values["timeout-seconds"]) * 1000;
  const online = await pollUntil(async () => (await demoNodesNotOnline(db)) === 0, timeoutMs);
  if (!online) say(`warning: ${await demoNodesNotOnline(db)} demo nodes are not online yet`);
  const started = await startDemoRollouts(db);
  const settled = await pollUntil(async () => {
    const rows = await db.rollout.findMany({
      where: { id: { in: started.map((s) => s.id) } },
      select: { id: true, status: true },
    });
    return started.every((s) => {
      const status = rows.find((row) => row.id === s.id)?.status;
      return !s.created || status === s.rollout.settlesAs;
    });
  }, timeoutMs);
  for (const { rollout, id, created } of started) {
    const row = await db.rollout.findUniqueOrThrow({ where: { id }, select: { status: true } });
    say(
      `rollout ${rollout.organization} ${rollout.app}@${rollout.version} ${row.status}${created ? "" : " (from an earlier run)"}`,
    );
  }
  if (!settled) say("warning: the demo rollouts did not settle in time (the controller goes on)");
}

try {
  await (command === "prepare" ? prepare() : rollouts());
} catch (error) {
  process.stderr.write(`demo ${command}: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await db.$disconnect();
}
