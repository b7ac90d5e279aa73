import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";
import { appRunningOn, hollowAgents, onlineNode, rollOutSeededCollector } from "./agents";
import { confirm, toast } from "./console";
import { signInAs, visit } from "./keycloak";

// Node operations in the console (issue 13): a real agent (hollow runtime, real protocol) gets
// an app through a rollout, then the node page restarts, stops, starts and health-checks it,
// forces a report and downloads a diagnostics bundle, and the nodes table runs a command on a
// selection with per-node results.

const agents = hollowAgents();

test("the node page runs app operations, a forced report and a diagnostics download; the nodes table a bulk command", async ({
  page,
}) => {
  test.setTimeout(180_000);
  await signInAs(page, "alice");

  const prefix = `acme-e2e-ops-${randomBytes(3).toString("hex")}`;
  await agents.start(page, { prefix, label: `e2eops=${prefix}` });
  const nodeName = `${prefix}-0`;
  const nodeId = await onlineNode(page, `e2eops=${prefix}`);

  // The seeded telemetry-collector 1.5.0, rolled out to this node alone.
  await rollOutSeededCollector(page, `e2eops=${prefix}`);

  await visit(page, `/nodes/${nodeId}`);
  await expect(page.getByTestId("node-title")).toHaveText(nodeName);
  const operations = page.getByTestId("app-operations-telemetry-collector");
  await appRunningOn(page, nodeId);

  // Restart: confirmed, then the node's answer in a toast with the restart counter.
  await operations.getByRole("button", { name: "Restart", exact: true }).click();
  await confirm(page, "Yes, restart");
  await expect(
    toast(page, `Restarted telemetry-collector on ${nodeName} (running, 1 restarts)`),
  ).toBeVisible();

  await operations.getByRole("button", { name: "Health check" }).click();
  await expect(toast(page, `telemetry-collector on ${nodeName} is healthy`)).toBeVisible();

  // Stop holds the app until Start.
  await operations.getByRole("button", { name: "Stop", exact: true }).click();
  await confirm(page, "Yes, stop");
  await expect(toast(page, /^Stopped telemetry-collector on .* \(stopped, 1 restarts\)$/)).toBeVisible();
  await expect(async () => {
    await visit(page, `/nodes/${nodeId}`);
    await expect(operations.getByRole("button", { name: "Start", exact: true })).toBeVisible({
      timeout: 2_000,
    });
  }).toPass({ timeout: 30_000 });
  await operations.getByRole("button", { name: "Start", exact: true }).click();
  await expect(toast(page, /^Started telemetry-collector on /)).toBeVisible();

  const nodeOperations = page.getByTestId("node-operations");
  await nodeOperations.getByRole("button", { name: "Force report" }).click();
  await expect(toast(page, `Report forced on ${nodeName}`)).toBeVisible();

  const download = page.waitForEvent("download");
  await nodeOperations.getByRole("button", { name: "Download diagnostics" }).click();
  const file = await download;
  expect(file.suggestedFilename()).toMatch(new RegExp(`^diagnostics-${nodeName}-.*\\.json$`));
  const bundle = JSON.parse(readFileSync((await file.path()) ?? "", "utf8")) as {
    node: string;
    agentVersion: string;
    apps: Array<{ app: string }>;
    log: string[];
  };
  expect(bundle.node).toBe(nodeName);
  expect(bundle.apps.map((entry) => entry.app)).toEqual(["telemetry-collector"]);

  // Bulk: this node and a seeded node that has no agent (offline), each with its own result.
  await visit(page, "/nodes");
  await page.getByLabel("Label selector").fill(`e2eops=${prefix}`);
  await page.getByLabel(`Select ${nodeName}`).check();
  await page.getByLabel("Label selector").fill("site=plant-9,tier=canary");
  await page.getByLabel("Select acme-plant-9-01").check();
  await page.getByTestId("bulk-commands").click();
  await page.getByLabel("Command", { exact: true }).selectOption("report");
  await page.getByRole("button", { name: "Run on 2 selected" }).click();
  const results = page.getByTestId("bulk-command-results");
  await expect(results).toContainText(`✓ Report forced on ${nodeName}`);
  await expect(results).toContainText("✗ acme-plant-9-01: node acme-plant-9-01 is offline");
});
