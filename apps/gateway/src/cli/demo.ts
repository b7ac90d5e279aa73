// The local demo of `./edgefleet up` (scripts/stack/services.sh). Never used in production.
//   demo prepare                       upload the demo versions' artifacts (every profile)
//   demo prepare --live --dir <dir> --leaf-port-base <port>
//                                      also write the live fleet (one leaf.conf per site and
//                                      fleet.json for `edgefleet-agent hollow --nodes`) and start
//                                      the demo rollouts (once). Prints `leaf <name> <config> <port>` per
//                                      site and `fleet <count> <file>` for the script to run.
// Reads the gateway's environment (stack.env).
import { parseArgs } from "node:util";
import { createPrismaClient } from "@edgefleet/db";
import { setUpDemoAlerts } from "../demo/alerts.js";
import { uploadDemoArtifacts } from "../demo/artifacts.js";
import { prepareDemoFleet } from "../demo/fleet.js";
import { startDemoRollouts } from "../demo/rollouts.js";
import { createEnrollment, enrollmentConfigFromEnv } from "../enrollment/index.js";
import { loadGatewayEnvOrExit } from "../env.js";
import { createLogger } from "../logger.js";
import { createGatewayMetrics } from "../metrics.js";

const USAGE = "usage: demo prepare [--live --dir <dir> --leaf-port-base <port>]\n";
const [command, ...rest] = process.argv.slice(2);
const { values } = parseArgs({
  args: rest,
  options: {
    live: { type: "boolean", default: false },
    dir: { type: "string" },
    "leaf-port-base": { type: "string" },
  },
});
if (command !== "prepare") {
  process.stderr.write(USAGE);
  process.exit(2);
}
const env = loadGatewayEnvOrExit();
const db = createPrismaClient(env.DATABASE_URL);
const say = (line: string) => process.stdout.write(`${line}\n`);

async function prepare() {
  if (!env.GATEWAY_INTERNAL_TOKEN)
    throw new Error("GATEWAY_INTERNAL_TOKEN must be set (the gateway's internal API)");
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
    throw new Error(
      "NATS_TENANCY_FILE, NATS_SYSTEM_CREDS and NATS_LEAF_URL must be set (the gateway's NATS secrets)",
    );
  }
  const enrollment = createEnrollment(db, config, createLogger("warn"), createGatewayMetrics().registry);
  try {
    const fleet = await prepareDemoFleet(db, enrollment, {
      dir: values.dir,
      leafPortBase: port,
      hubLeafUrls: env.NATS_LEAF_URL,
      hubUrls: env.NATS_URL,
    });
    for (const leaf of fleet.leaves) say(`leaf ${leaf.name} ${leaf.configPath} ${leaf.port}`);
    say(`fleet ${fleet.nodes} ${fleet.nodesFile}`);
  } finally {
    await enrollment.stop();
  }
  // Before the rollouts start: the paused one's event then raises its alert.
  const alerts = await setUpDemoAlerts(db);
  say(`alerts ${alerts.created} demo policies and channels created`);
  for (const { rollout, id, created } of await startDemoRollouts(db)) {
    const { status } = await db.rollout.findUniqueOrThrow({ where: { id }, select: { status: true } });
    const what = `${rollout.organization} ${rollout.app}@${rollout.version}`;
    say(
      created
        ? `rollout ${what} started (${rollout.settlesAs === "completed" ? "finishes" : "waits for approval after its first batch"} once its agents report)`
        : `rollout ${what} ${status}`,
    );
  }
}

try {
  await prepare();
} catch (error) {
  process.stderr.write(`demo ${command}: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await db.$disconnect();
}
