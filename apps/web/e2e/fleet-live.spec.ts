import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { hollowAgents } from "./agents";
import { mutate } from "./console";
import { signInAs } from "./keycloak";

const agents = hollowAgents();

test("the fleet page shows a node coming online and being revoked without a reload", async ({ page }) => {
  test.setTimeout(120_000);
  await signInAs(page, "alice");
  await expect(page.getByTestId("live-state")).toHaveAttribute("data-state", "live");
  // Marks this document: a reload or navigation would lose it.
  await page.evaluate(() => {
    (window as unknown as { notReloaded: boolean }).notReloaded = true;
  });

  // A real agent (hollow runtime, real protocol) enrolls with a fresh token and connects.
  // Named like the organization's other nodes, so specs that expect only `acme-…` names in Acme still hold.
  const prefix = `acme-e2e-live-${randomBytes(3).toString("hex")}`;
  await agents.start(page, { prefix });
  const nodeName = `${prefix}-0`;
  const event = (to: string) =>
    page.locator(`[data-testid="recent-event"][data-node="${nodeName}"][data-to="${to}"]`);

  // Enrollment, then Hello → online: both arrive as events, pushed to the page.
  await expect(event("offline")).toBeVisible({ timeout: 45_000 });
  await expect(event("online")).toBeVisible({ timeout: 45_000 });
  await expect
    .poll(async () => Number(await page.getByTestId("count-online").textContent()), { timeout: 30_000 })
    .toBeGreaterThan(0);

  // Revoking it through the API (another tab could do this) shows up here too.
  const nodeId = await event("online").locator("a").getAttribute("href");
  expect(nodeId).toMatch(/^\/nodes\/[0-9a-f-]{36}$/);
  await mutate(page, "enrollment.revokeNode", { nodeId: nodeId?.split("/").at(-1) });
  await expect(event("revoked")).toBeVisible({ timeout: 30_000 });

  expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

  // The node's own page has the same history, newest first, and draws it.
  await event("revoked").locator("a").click();
  await expect(page.getByTestId("node-title")).toHaveText(nodeName);
  await expect(page.getByTestId("status-event")).toHaveCount(3);
  expect(
    await page.getByTestId("status-event").evaluateAll((rows) => rows.map((row) => row.dataset.to)),
  ).toEqual(["revoked", "online", "offline"]);
  await expect(page.getByTestId("availability-strip").locator('rect[data-status="online"]')).toHaveCount(1);
});

test("the live signal is tenant-scoped: a foreign organization's subscription is refused", async ({
  page,
  context,
}) => {
  await signInAs(page, "alice");
  const { hostname } = new URL(page.url());
  await context.addCookies([{ name: "edgefleet-org", value: "globex", domain: hostname, path: "/" }]);
  const response = await page.request.get("/api/trpc/fleet.changes", { timeout: 15_000 });
  const body = await response.text();
  expect(body).toContain("NOT_FOUND");
  expect(body).not.toContain('"at"');
});
