import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, test } from "@playwright/test";
import { confirm, mutate, query, toast } from "./console";
import { signInAs, visit } from "./keycloak";

// Node operations in the console (issue 13): a real agent (hollow runtime, real protocol) gets
// an app through a rollout, then the node page restarts, stops, starts and health-checks it,
// forces a report and downloads a diagnostics bundle, and the nodes table runs a command on a
// selection with per-node results.

const NATS_URL = process.env.NATS_URL;
const NATS_ENROLL_CREDS = process.env.NATS_ENROLL_CREDS;
const AGENT_CLI = fileURLToPath(
  new URL("../../../packages/agent-sdk/bin/edgefleet-agent.mjs", import.meta.url),
);

let agent: ChildProcess | null = null;
test.afterEach(() => {
  agent?.kill("SIGTERM");
  agent = null;
});

test("the node page runs app operations, a forced report and a diagnostics download; the nodes table a bulk command", async ({
  page,
}) => {
  if (!NATS_URL || !NATS_ENROLL_CREDS)
    throw new Error("NATS_URL / NATS_ENROLL_CREDS unset: export the stack's stack.env");
  test.setTimeout(180_000);
  await signInAs(page, "alice");

  const prefix = `acme-e2e-ops-${randomBytes(3).toString("hex")}`;
  const token = await mutate<{ token: string }>(page, "enrollment.createToken", {
    description: prefix,
    maxUses: 1,
    expiresInHours: 1,
  });
  agent = spawn(
    process.execPath,
    [
      AGENT_CLI,
      ...["hollow", "--count", "1", "--token", token.token, "--url", NATS_URL],
      ...["--enroll-creds", NATS_ENROLL_CREDS, "--name-prefix", prefix, "--label", `e2eops=${prefix}`],
    ],
    { stdio: "ignore" },
  );
  const nodeName = `${prefix}-0`;
  const onlineNodeId = async () => {
    const list = await query<{ items: Array<{ id: string; status: string }> }>(page, "node.list", {
      selector: `e2eops=${prefix}`,
      limit: 5,
    });
    return list.items[0]?.status === "online" ? list.items[0].id : "";
  };
  await expect.poll(onlineNodeId, { timeout: 60_000 }).not.toBe("");
  const nodeId = await onlineNodeId();

  // The seeded telemetry-collector 1.5.0, rolled out to this node alone.
  const apps = await query<Array<{ id: string; name: string }>>(page, "app.list", {});
  const app = apps.find((entry) => entry.name === "telemetry-collector");
  if (!app) throw new Error("the seed's telemetry-collector app is missing");
  const versions = await query<{ items: Array<{ id: string; version: string }> }>(page, "appVersion.list", {
    appId: app.id,
  });
  const version = versions.items.find((entry) => entry.version === "1.5.0");
  if (!version) throw new Error("telemetry-collector 1.5.0 is missing");
  const rollout = await mutate<{ id: string }>(page, "rollout.create", {
    appVersionId: version.id,
    target: { selector: `e2eops=${prefix}` },
    strategy: { batches: [{ percent: 100 }] },
  });
  await mutate(page, "rollout.start", { id: rollout.id });

  await visit(page, `/nodes/${nodeId}`);
  await expect(page.getByTestId("node-title")).toHaveText(nodeName);
  const operations = page.getByTestId("app-operations-telemetry-collector");
  await expect(async () => {
    await visit(page, `/nodes/${nodeId}`);
    await expect(page.getByTestId("apps-table")).toContainText("running", { timeout: 2_000 });
  }).toPass({ timeout: 60_000 });

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
