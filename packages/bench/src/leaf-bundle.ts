import { mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";

/**
 * Asks the gateway for a site's leaf bundle (its internal API, POST /internal/sites/{id}/leaf-bundle,
 * what the console downloads) and writes leaf.conf, site.creds and the companion credentials under
 * `dir/name`. Every benchmark that runs a site leaf comes through here, so none can forget a file.
 */
export async function writeLeafBundle(input: {
  gatewayUrl: string;
  internalToken: string;
  organizationId: string;
  siteId: string;
  name: string;
  /** Where the site's agents connect (127.0.0.1:<port>). */
  port: number;
  dir: string;
}): Promise<{ configPath: string; config: string }> {
  const siteDir = join(input.dir, input.name);
  mkdirSync(siteDir, { recursive: true, mode: 0o700 });
  const credentialsPath = join(siteDir, "site.creds");
  const response = await fetch(`${input.gatewayUrl}/internal/sites/${input.siteId}/leaf-bundle`, {
    method: "POST",
    headers: { authorization: `Bearer ${input.internalToken}`, "content-type": "application/json" },
    body: JSON.stringify({
      organizationId: input.organizationId,
      listen: `127.0.0.1:${input.port}`,
      credentialsPath,
      // No site artifact cache (the console's default turns it on): the benchmarks measure the
      // control plane, and two leaves' JetStream stores would share /var/lib/edgefleet/site-cache.
      siteCache: null,
    }),
    signal: AbortSignal.timeout(30_000),
  });
  if (!response.ok)
    throw new Error(`leaf bundle of ${input.name}: HTTP ${response.status} ${await response.text()}`);
  const bundle = (await response.json()) as {
    config: string;
    creds: string;
    companions?: Record<string, string>;
  };
  const configPath = join(siteDir, "leaf.conf");
  writeFileSync(configPath, bundle.config, { mode: 0o600 });
  writeFileSync(credentialsPath, bundle.creds, { mode: 0o600 });
  // The config's other remotes (the site's system link, the enrollment account) read these: a leaf
  // without them redials the hub every second for each, and the hub pays for every attempt.
  for (const [file, content] of Object.entries(bundle.companions ?? {}))
    writeFileSync(join(siteDir, basename(file)), content, { mode: 0o600 });
  return { configPath, config: bundle.config };
}
