/**
 * Gives a test organization its own Alertmanager in Mimir, as the gateway's alerting reconciler
 * does for every organization in a running installation.
 *
 * Without an uploaded config Mimir starts a tenant's Alertmanager lazily on its first request
 * and stops it again at a later config poll; a request after that stop is answered 406 ("Not
 * initializing the Alertmanager"), and an alert posted before it is gone. A test that posts an
 * alert and then reads it back must therefore configure the tenant first.
 */

/** Routes everything to a receiver that sends nothing: the tests read alerts, not notifications. */
const MINIMAL_CONFIG = [
  "alertmanager_config: |",
  "  route:",
  "    receiver: edgefleet-test-none",
  "  receivers:",
  "    - name: edgefleet-test-none",
  "",
].join("\n");

export async function configureAlertmanager(mimirUrl: string, tenant: string, timeoutMs = 30_000) {
  const upload = await fetch(new URL("/api/v1/alerts", mimirUrl), {
    method: "POST",
    headers: { "X-Scope-OrgID": tenant, "Content-Type": "application/yaml" },
    body: MINIMAL_CONFIG,
  });
  if (upload.status !== 201) throw new Error(`Mimir refused the Alertmanager config: ${upload.status}`);
  // The tenant's Alertmanager starts at the next config poll; its status answers 200 from then on.
  const deadline = Date.now() + timeoutMs;
  let last = 0;
  while (Date.now() < deadline) {
    const status = await fetch(new URL("/alertmanager/api/v2/status", mimirUrl), {
      headers: { "X-Scope-OrgID": tenant },
    });
    last = status.status;
    if (last === 200) {
      // A lazily started Alertmanager answers too, with the fallback config: wait for ours.
      const body = (await status.json()) as { config?: { original?: string } };
      if (body.config?.original?.includes("edgefleet-test-none")) return;
    } else {
      await status.body?.cancel();
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the Alertmanager of ${tenant} did not start within ${timeoutMs} ms (last status ${last})`);
}
