// pnpm --filter @edgefleet/gateway site-leaf --org <slug> --site <name> --hub <nats-leaf://host:port>
//     [--listen 0.0.0.0:4222] [--creds-path /etc/edgefleet/site.creds]
//     [--cache-dir <dir>] [--cache-bytes <n>] [--no-cache] --out <dir>
// Writes leaf.conf and site.creds for a site's leaf node. Reads the gateway's environment
// (DATABASE_URL, NATS_URL, NATS_SYSTEM_CREDS, NATS_TENANCY_FILE): run it where the gateway runs.
// The leaf runs the site artifact cache (JetStream, bounded to --cache-bytes, default 4 GiB, in
// --cache-dir, default <out>/jetstream) unless --no-cache.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createPrismaClient } from "@edgefleet/db";
import { createEnrollment, enrollmentConfigFromEnv } from "../enrollment/index.js";
import { loadGatewayEnvOrExit } from "../env.js";
import { createLogger } from "../logger.js";
import { createGatewayMetrics } from "../metrics.js";
import { createLeafBundle, siteCacheOptions } from "../sites/leaf-bundle.js";

const { values } = parseArgs({
  options: {
    org: { type: "string" },
    site: { type: "string" },
    hub: { type: "string", multiple: true },
    listen: { type: "string", default: "0.0.0.0:4222" },
    "creds-path": { type: "string" },
    out: { type: "string" },
    "cache-dir": { type: "string" },
    "cache-bytes": { type: "string" },
    "no-cache": { type: "boolean", default: false },
  },
});
if (!values.org || !values.site || !values.hub?.length || !values.out) {
  process.stderr.write(
    "usage: site-leaf --org <slug> --site <name> --hub <nats-leaf://host:port> [--listen host:port] [--creds-path path] --out <dir>\n",
  );
  process.exit(2);
}
// The cache options go through the same schema as the console's bundle (internal API).
const siteCache = values["no-cache"]
  ? null
  : siteCacheOptions.safeParse({
      storeDir: resolve(values["cache-dir"] ?? join(values.out, "jetstream")),
      ...(values["cache-bytes"] !== undefined ? { maxBytes: Number(values["cache-bytes"]) } : {}),
    });
if (siteCache && !siteCache.success) {
  process.stderr.write(`site-leaf: ${siteCache.error.issues.map((issue) => issue.message).join("; ")}\n`);
  process.exit(2);
}
const env = loadGatewayEnvOrExit();
const enrollmentConfig = enrollmentConfigFromEnv(env);
if (!enrollmentConfig) {
  process.stderr.write("NATS_TENANCY_FILE and NATS_SYSTEM_CREDS must be set (the gateway's NATS secrets)\n");
  process.exit(2);
}
const db = createPrismaClient(env.DATABASE_URL);
const enrollment = createEnrollment(
  db,
  enrollmentConfig,
  createLogger("warn"),
  createGatewayMetrics().registry,
);
try {
  const site = await db.site.findFirst({
    where: { name: values.site, organization: { slug: values.org } },
    select: { id: true, organizationId: true },
  });
  if (!site) throw new Error(`no site "${values.site}" in organization "${values.org}"`);
  const out = resolve(values.out);
  const bundle = await createLeafBundle(
    db,
    enrollment.secrets,
    enrollment.accounts,
    {
      organizationId: site.organizationId,
      siteId: site.id,
      hubLeafUrls: values.hub,
      listen: values.listen,
      credentialsPath: values["creds-path"] ?? join(out, "site.creds"),
      siteCache: siteCache?.data ?? null,
    },
    { metricsIntervalS: env.GATEWAY_METRICS_INTERVAL_S },
  );
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "leaf.conf"), bundle.config);
  writeFileSync(join(out, "site.creds"), bundle.creds, { mode: 0o600 });
  for (const [name, content] of Object.entries(bundle.companions))
    writeFileSync(join(out, name), content, { mode: 0o600 });
  process.stdout.write(
    `wrote ${join(out, "leaf.conf")} and ${join(out, "site.creds")}\nrun the site's leaf node with: nats-server -c ${join(out, "leaf.conf")}\n`,
  );
} catch (error) {
  process.stderr.write(`site-leaf: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await enrollment.stop();
  await db.$disconnect();
}
