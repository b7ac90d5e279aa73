import { expect, type Page } from "@playwright/test";
import { pushTimeseries } from "prometheus-remote-write";
import { query } from "./console";

// Metrics written straight into the stack's Mimir, for charts and gates that would otherwise wait
// for agents' reports.

/** The id of Acme, the signed-in user's organization: its Mimir tenant. */
export async function acmeId(page: Page): Promise<string> {
  const organizations = await query<Array<{ id: string; slug: string }>>(page, "organization.listMine", {});
  const acme = organizations.find((o) => o.slug === "acme");
  if (!acme) throw new Error("the signed-in user is not in acme");
  return acme.id;
}

/** Writes series under an organization's tenant by remote write, as the gateway writes them. */
export async function writeToMimir(
  tenant: string,
  series: Parameters<typeof pushTimeseries>[0],
): Promise<void> {
  const mimir = process.env.MIMIR_URL;
  if (!mimir) throw new Error("MIMIR_URL unset: export the stack's stack.env");
  const written = await pushTimeseries(series, {
    url: new URL("/api/v1/push", mimir).toString(),
    headers: { "X-Scope-OrgID": tenant },
    fetch: (url, init) =>
      fetch(url, { method: "POST", headers: init?.headers, body: init?.body as unknown as BodyInit }),
  });
  expect(written.status, written.errorMessage).toBe(200);
}
