import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { expect, type Page, test } from "@playwright/test";
import { appRunningOn, hollowAgents, onlineNode, rollOutSeededCollector } from "./agents";
import { confirm, query } from "./console";
import { signInAs } from "./keycloak";

// Live logs and network probes on the node page (issue 13): a real agent (hollow runtime, real
// protocol) gets an app through a rollout; the page tails its output (follow, pause, search,
// download) while an operation adds lines, and runs a probe to the leaf whose result is charted.

const agents = hollowAgents();

/** A hollow agent with telemetry-collector 1.5.0 running; its node id and name. */
async function nodeWithApp(page: Page): Promise<{ nodeId: string; nodeName: string }> {
  const prefix = `acme-e2e-logs-${randomBytes(3).toString("hex")}`;
  await agents.start(page, { prefix, label: `e2elogs=${prefix}` });
  const nodeId = await onlineNode(page, `e2elogs=${prefix}`);
  await rollOutSeededCollector(page, `e2elogs=${prefix}`);
  await appRunningOn(page, nodeId);
  return { nodeId, nodeName: `${prefix}-0` };
}

test("the node page tails an app's logs (follow, pause, search, download) and runs a probe", async ({
  page,
}) => {
  test.setTimeout(180_000);
  await signInAs(page, "alice");
  const { nodeId } = await nodeWithApp(page);

  const viewer = page.getByTestId("log-viewer");
  const lines = viewer.getByTestId("log-lines");
  await viewer.getByLabel("App to tail").selectOption("telemetry-collector");
  await viewer.getByRole("button", { name: "Tail logs" }).click();
  await expect(viewer.getByTestId("log-status")).toContainText("Following telemetry-collector");
  await expect(lines).toContainText("hollow: telemetry-collector 1.5.0 is running");

  // A restart writes a line: it arrives while the page follows.
  const operations = page.getByTestId("app-operations-telemetry-collector");
  await operations.getByRole("button", { name: "Restart", exact: true }).click();
  await confirm(page, "Yes, restart");
  await expect(lines).toContainText("telemetry-collector restart by an operator");

  // Paused: new lines are held back, then shown on Follow.
  await viewer.getByRole("button", { name: "Pause" }).click();
  await operations.getByRole("button", { name: "Health check" }).click();
  await expect(viewer.getByRole("button", { name: /^Follow \(1 new\)$/ })).toBeVisible({ timeout: 15_000 });
  await expect(lines).not.toContainText("health by an operator");
  await viewer.getByRole("button", { name: /^Follow/ }).click();
  await expect(lines).toContainText("telemetry-collector health by an operator");

  // Search filters the loaded window.
  await viewer.getByLabel("Search the loaded lines").fill("restart");
  await expect(lines.locator("div", { hasText: "by an operator" })).toHaveCount(1);
  await expect(viewer.getByTestId("log-status")).toContainText("1 match");
  await viewer.getByLabel("Search the loaded lines").fill("");

  const download = page.waitForEvent("download");
  await viewer.getByRole("button", { name: "Download" }).click();
  const file = await download;
  expect(file.suggestedFilename()).toMatch(/^telemetry-collector-.*\.log$/);
  const text = readFileSync((await file.path()) ?? "", "utf8");
  expect(text).toContain("restart by an operator");
  expect(text).toContain("health by an operator");

  await viewer.getByRole("button", { name: "Stop tailing" }).click();
  await expect(viewer.getByRole("button", { name: "Tail logs" })).toBeVisible();

  // A probe to the leaf (here: the hub the agent is connected to) and its charted result.
  const probes = page.getByTestId("node-probes");
  await probes.getByRole("button", { name: "Probe to leaf" }).click();
  await expect(probes.getByTestId("latest-probe")).toContainText(/Latest: leaf [\d,]+(\.\d)? Mbit\/s/, {
    timeout: 30_000,
  });
  await expect(probes.getByTestId("probe-chart")).toHaveAttribute("data-points", "1");
  const stored = await query<Array<{ ok: boolean; target: string }>>(page, "node.probes", { id: nodeId });
  expect(stored[0]).toMatchObject({ ok: true, target: "leaf" });
});

test("a viewer sees no log lines: reading logs takes an operator", async ({ page }) => {
  await signInAs(page, "carol");
  const nodes = await query<{ items: Array<{ id: string }> }>(page, "node.list", {
    selector: "site=plant-9,tier=canary",
    limit: 1,
  });
  const nodeId = nodes.items[0]?.id;
  if (!nodeId) throw new Error("the seed's plant-9 canary nodes are missing");
  const refused = await page.request.post("/api/trpc/node.openLogs", {
    data: { json: { id: nodeId, app: "telemetry-collector" } },
  });
  expect(refused.status()).toBe(403);
  expect(await refused.text()).toContain("operator");
});
