/**
 * Scenario (b) of `pnpm bench:rollout --scenario site-cache` (issue 11, Measure): one site of N
 * hollow agents (default 50, real fetches) behind a real leaf node, a rollout of a 20 MiB
 * artifact with a per-site bandwidth budget, run twice: with the site cache (the leaf runs
 * JetStream) and without it (every node pulls from the hub). Uplink bytes and the peak rate are
 * read from the hub's /leafz byte counters of the site's leaf connection, sampled every second.
 * Starts its own hub, leaf, database and gateway (from the stack's Postgres and Mimir: source a
 * profile's stack.env first); writes docs/benchmarks/rollout-site-cache.md and its JSON.
 */
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startHollowFleet } from "@edgefleet/agent-sdk";
import { artifactBucket, efArtifactUrl, formatWireId } from "@edgefleet/agent-sdk/protocol";
import { createEnrollmentToken } from "@edgefleet/db";
import { createMigratedDatabase } from "@edgefleet/db/testing";
import { createTenancySecrets } from "@edgefleet/nats-tenancy";
import { freePort, startNats, startOperatorModeHub, waitFor } from "@edgefleet/nats-tenancy/testing";
import { rolloutStrategySchema } from "@edgefleet/rollout";
import { actOnRollout, insertRollout } from "@edgefleet/rollout-store";
import { jetstream } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import { connect, credsAuthenticator } from "@nats-io/transport-node";
import { readLeafLinks, watchLeafLink } from "../../src/sites/leaf-links.js";
import { GatewayProcess } from "../support/gateway-process.js";

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "50" },
    "artifact-mib": { type: "string", default: "20" },
    "budget-bytes-per-second": { type: "string", default: "8000000" },
    out: { type: "string" },
    runs: { type: "string", default: "cache,no-cache" },
  },
});
const NODES = Number(values.nodes);
const ARTIFACT_BYTES = Number(values["artifact-mib"]) * 1024 * 1024;
const BUDGET = Number(values["budget-bytes-per-second"]);
const REPO_ROOT = join(import.meta.dirname, "../../../..");
const OUT_DIR = values.out ?? join(REPO_ROOT, "docs/benchmarks");
const gatewayDir = join(import.meta.dirname, "../..");
for (const [name, value] of Object.entries({ NODES, ARTIFACT_BYTES, BUDGET }))
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
for (const name of ["DATABASE_URL", "MIMIR_URL"])
  if (!process.env[name]) throw new Error(`${name} is not set: source var/<profile>/stack.env first`);

interface RunResult {
  mode: "cache" | "no-cache";
  nodes: number;
  artifactBytes: number;
  budgetBytesPerSecond: number;
  uplinkBytes: number;
  uplinkTimesArtifact: number;
  peakBytesPerSecond: number;
  peakOverBudget: number;
  rolloutSeconds: number;
  siteCacheEvent: string | null;
  nodesRunning: number;
  chunksFromSiteCache: number;
  chunksFromHub: number;
}

async function runOnce(mode: "cache" | "no-cache"): Promise<RunResult> {
  const workDir = mkdtempSync(join(tmpdir(), "ef-bench-site-cache-"));
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    const secrets = await createTenancySecrets("bench-site-cache");
    const hub = await startOperatorModeHub(secrets);
    cleanups.push(() => hub.stop());
    const database = await createMigratedDatabase();
    cleanups.push(() => database.drop());
    const db = database.db;
    const organization = await db.organization.create({ data: { slug: "bench", name: "Bench" } });
    const organizationId = organization.id;
    const site = await db.site.create({ data: { organizationId, name: "site-b" } });
    const file = (name: string, content: string) => {
      writeFileSync(join(workDir, name), content);
      return join(workDir, name);
    };
    const env = {
      DATABASE_URL: database.url,
      NATS_URL: hub.url,
      MIMIR_URL: process.env.MIMIR_URL as string,
      NATS_CREDS: file("gateway.creds", secrets.platform.userCreds),
      NATS_SYSTEM_CREDS: file("system.creds", secrets.system.userCreds),
      NATS_TENANCY_FILE: file("tenancy.json", JSON.stringify(secrets)),
    };
    const gateway = await GatewayProcess.start({
      ...env,
      GATEWAY_ARTIFACT_CACHE_DIR: join(workDir, "gateway-cache"),
      GATEWAY_ROLLOUT_TICK_MS: "500",
      NATS_MONITOR_URL: hub.monitorUrl,
    });
    cleanups.push(() => gateway.kill());
    await gateway.waitForReadyz(200);

    const agentPort = await freePort();
    const out = join(workDir, "bundle");
    const bundle = spawnSync(
      process.execPath,
      [
        join(gatewayDir, "node_modules/tsx/dist/cli.mjs"),
        "src/cli/site-leaf.ts",
        ...["--org", "bench", "--site", site.name, "--hub", hub.leafUrl],
        ...["--listen", `127.0.0.1:${agentPort}`, "--out", out],
        ...(mode === "cache" ? ["--cache-dir", join(workDir, "leaf-js")] : ["--no-cache"]),
      ],
      { cwd: gatewayDir, env: { PATH: process.env.PATH ?? "", ...env }, encoding: "utf8" },
    );
    if (bundle.status !== 0) throw new Error(`site-leaf failed: ${bundle.stderr}`);
    const leaf = await startNats(
      ({ monitorPort }) =>
        `${readFileSync(join(out, "leaf.conf"), "utf8")}\nhttp: 127.0.0.1:${monitorPort}\n`,
    );
    cleanups.push(() => leaf.stop());
    const leafName = `bench-${site.name}`;
    await waitFor("leaf linked", async () =>
      (await readLeafLinks(hub.monitorUrl)).has(leafName) ? true : undefined,
    );

    const { token } = await createEnrollmentToken(db, organizationId, {
      expiresAt: new Date(Date.now() + 3_600_000),
      maxUses: NODES,
      siteId: site.id,
    });
    const fleet = await startHollowFleet({
      count: NODES,
      token,
      servers: [`nats://127.0.0.1:${agentPort}`],
      enrollServers: [hub.url],
      enrollCreds: secrets.enroll.userCreds,
      namePrefix: "b",
      fetchArtifacts: true,
    });
    cleanups.push(() => fleet.stop());
    await waitFor(
      "nodes online",
      async () =>
        (await db.node.count({ where: { siteId: site.id, status: "online" } })) === NODES ? true : undefined,
      600_000,
    );

    const platform = await connect({
      servers: hub.url,
      authenticator: credsAuthenticator(new TextEncoder().encode(secrets.platform.userCreds)),
    });
    cleanups.push(() => platform.close());
    const bytes = randomBytes(ARTIFACT_BYTES);
    const sha = createHash("sha256").update(bytes).digest("hex");
    const store = await new Objm(jetstream(platform, { domain: "hub" })).create(
      artifactBucket(formatWireId(organization.wireId)),
    );
    await store.putBlob({ name: sha }, bytes);
    const app = await db.app.create({ data: { organizationId, name: "bench-app" } });
    const version = await db.appVersion.create({
      data: {
        organizationId,
        appId: app.id,
        version: "1.0.0",
        artifactUrl: efArtifactUrl(sha),
        artifactSha256: sha,
        runSpec: { command: ["./artifact"] },
      },
    });
    const actor = { type: "system" as const, id: "bench-site-cache" };
    const rolloutId = await db.$transaction((tx) =>
      insertRollout(tx, {
        organizationId,
        appId: app.id,
        appVersionId: version.id,
        selector: "",
        siteIds: [],
        strategy: rolloutStrategySchema.parse({
          batches: [{ percent: 100, timeoutSeconds: 3_600 }],
          siteBandwidth: { bytesPerSecond: BUDGET },
        }),
        versionLabel: "1.0.0",
        actor,
      }),
    );
    const link = watchLeafLink(hub.monitorUrl, leafName, 1_000);
    const started = Date.now();
    const action = await db.$transaction((tx) =>
      actOnRollout(tx, organizationId, rolloutId, { type: "start" }, actor),
    );
    if (!action.ok) throw new Error(JSON.stringify(action));
    const timeoutMs = Math.max(300_000, ((NODES * ARTIFACT_BYTES) / BUDGET) * 3_000);
    await waitFor(
      "rollout completed",
      async () => {
        const { status } = await db.rollout.findUniqueOrThrow({ where: { id: rolloutId } });
        return status === "completed" || status === "failed" ? status : undefined;
      },
      timeoutMs,
      500,
    );
    const rolloutSeconds = (Date.now() - started) / 1000;
    const use = await link.stop();
    const event = await db.rolloutEvent.findFirst({ where: { rolloutId, kind: "site_cache" } });
    const nodesRunning = await db.appInstance.count({
      where: { observedVersionId: version.id, state: "running" },
    });
    const counters = fleet.agents.reduce(
      (sum, agent) => ({
        siteCache: sum.siteCache + agent.chunkCounters.siteCache,
        fallback: sum.fallback + agent.chunkCounters.fallback,
      }),
      { siteCache: 0, fallback: 0 },
    );
    const uplinkBytes = use?.bytes ?? 0;
    const peak = use?.peakBytesPerSecond ?? 0;
    return {
      mode,
      nodes: NODES,
      artifactBytes: ARTIFACT_BYTES,
      budgetBytesPerSecond: BUDGET,
      uplinkBytes,
      uplinkTimesArtifact: uplinkBytes / ARTIFACT_BYTES,
      peakBytesPerSecond: peak,
      peakOverBudget: peak / BUDGET,
      rolloutSeconds,
      siteCacheEvent: event?.message ?? null,
      nodesRunning,
      chunksFromSiteCache: counters.siteCache,
      chunksFromHub: counters.fallback,
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    rmSync(workDir, { recursive: true, force: true });
  }
}

function render(results: RunResult[], startedAt: Date): string {
  const mb = (n: number) => (n / 1e6).toFixed(2);
  const row = (r: RunResult) =>
    `| ${r.mode === "cache" ? "with site cache" : "without (hub fallback)"} | ${r.nodesRunning}/${r.nodes} | ${mb(r.uplinkBytes)} MB | ${r.uplinkTimesArtifact.toFixed(3)}× | ${mb(r.peakBytesPerSecond)} MB/s | ${(r.peakOverBudget * 100).toFixed(1)} % | ${r.rolloutSeconds.toFixed(1)} s | ${r.chunksFromSiteCache} / ${r.chunksFromHub} |`;
  return [
    "# Rollout benchmark (b): one site behind a leaf, site cache and bandwidth budget",
    "",
    `Run ${startedAt.toISOString()} with \`pnpm bench:rollout --scenario site-cache\` (apps/gateway/test/bench/site-cache-bench.ts),`,
    `nats-server from the stack, ${NODES} hollow agents (real chunk fetches, SHA-256 verified) behind one real leaf node,`,
    `a ${mb(ARTIFACT_BYTES)} MB (${ARTIFACT_BYTES / 1024 / 1024} MiB) random artifact, one rollout batch of 100 %, site budget`,
    `\`siteBandwidth.bytesPerSecond: ${BUDGET}\` (${mb(BUDGET)} MB/s). Machine: 2 shared cores (load average at the end`,
    `${loadavg()[0]?.toFixed(1)}; other agents were working on it).`,
    "",
    "Uplink = bytes the hub sent down the site leaf's connection (hub `/leafz` `out_bytes`), from the",
    "rollout's start to its completion; peak = the highest rate over any 1 s sample of that counter.",
    "",
    "| run | nodes running the version | uplink bytes | × artifact | peak rate | peak / budget | rollout time | chunks from leaf / from hub |",
    "|---|---|---|---|---|---|---|---|",
    ...results.map(row),
    "",
    "Targets (issue 11): with the cache ≈ 1× the artifact over the uplink; peak ≤ budget + 10 %.",
    "",
    ...results.map((r) => `- ${r.mode}: site cache event: ${r.siteCacheEvent ?? "none"}`),
    "",
  ].join("\n");
}

const startedAt = new Date();
const results: RunResult[] = [];
for (const mode of (values.runs ?? "").split(",").map((m) => m.trim())) {
  if (mode !== "cache" && mode !== "no-cache") throw new Error(`--runs: unknown run ${mode}`);
  process.stdout.write(
    `site-cache bench: ${mode} run (${NODES} nodes, ${ARTIFACT_BYTES} bytes, budget ${BUDGET} B/s)\n`,
  );
  const result = await runOnce(mode);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  results.push(result);
}
mkdirSync(OUT_DIR, { recursive: true });
writeFileSync(join(OUT_DIR, "rollout-site-cache.md"), render(results, startedAt));
writeFileSync(join(OUT_DIR, "rollout-site-cache-results.json"), `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(`wrote ${join(OUT_DIR, "rollout-site-cache.md")}\n`);
process.exit(0);
