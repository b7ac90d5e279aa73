import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import { expectNodesOnline, hollowAgents, natsOfStack } from "./agents";
import { addVersion, createApp } from "./apps";
import { confirm, mutate, query } from "./console";
import { signInAs, visit } from "./keycloak";

// Apps, versions and rollouts end to end: real hollow agents (real protocol, real artifact
// download through the gateway and NATS, SHA-256 checked) receive the version a rollout sends.

interface Deployment {
  instances: number;
  versions: Array<{ version: string; observed: { byState: Record<string, number> } }>;
}

const agents = hollowAgents();
let leafServer: ChildProcess | null = null;
test.afterEach(() => {
  leafServer?.kill("SIGTERM");
  leafServer = null;
});

/** A port nothing listens on now (the test's leaf node takes it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

test("an operator creates an app and a version, previews and starts a rollout, approves it, watches it finish and rolls it back", async ({
  page,
}) => {
  test.setTimeout(240_000);
  const suffix = randomBytes(3).toString("hex");
  await signInAs(page, "alice");

  // Two live agents that download artifacts for real, labelled so the rollout targets only them.
  const prefix = `acme-e2e-rollout-${suffix}`;
  await agents.start(page, { prefix, count: 2, label: `e2e-rollout=${suffix}`, fetchArtifacts: true });
  await expectNodesOnline(page, prefix, 2);

  // The app.
  const appName = `e2e-${suffix}`;
  const appId = await createApp(page, appName);

  // A version with an uploaded artifact: a bad label is refused on the field before anything is sent.
  const versionForm = page.getByRole("form", { name: "Add a version" });
  await versionForm.getByRole("textbox", { name: "Version" }).fill("not a version!");
  await versionForm.getByRole("textbox", { name: "Command" }).click();
  await expect(versionForm.getByText(/version: 1-64 letters/)).toBeVisible();
  const row = await addVersion(page, {
    version: "1.0.0",
    command: "./collector --once",
    file: "collector.bin",
    content: Buffer.from(`#!/bin/sh\necho collector ${suffix}\n`.repeat(2000)),
  });
  await expect(page.getByTestId("upload-progress")).toBeVisible();
  await expect(row.getByTestId("artifact-state")).toHaveAttribute("data-state", "ready", { timeout: 30_000 });

  // The rollout: one canary, approval, then the rest; previewed before it starts.
  await row.getByRole("link", { name: "Roll out" }).click();
  await expect(page).toHaveURL(/\/rollouts\/new\?/);
  await expect(page.getByRole("combobox", { name: "Version" })).toHaveValue(/[0-9a-f-]{36}/);
  await page.getByRole("textbox", { name: "Label selector" }).fill(`e2e-rollout=${suffix}`);
  await page.getByRole("button", { name: "Remove batch 2" }).click();
  await expect(page.getByRole("combobox", { name: "Batch 1 pause after" })).toHaveValue("approval");
  await page.getByRole("button", { name: "Preview" }).click();
  const planned = page.getByTestId("plan-batch");
  await expect(planned).toHaveCount(2);
  await expect(page.getByTestId("plan-to-update")).toHaveText("2");
  expect(await planned.evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.nodes))).toEqual([
    "1",
    "1",
  ]);
  await page.getByRole("button", { name: "Start rollout" }).click();
  await expect(page).toHaveURL(/\/rollouts\/[0-9a-f-]{36}$/);

  // The canary runs the version, then the rollout waits for a person.
  const status = page.getByTestId("rollout-status");
  await expect(status).toHaveAttribute("data-status", "awaiting_approval", { timeout: 60_000 });
  const batch = (index: number) =>
    page.locator(`[data-testid="batch-row"][data-phase="forward"][data-index="${index}"]`);
  await expect(batch(0)).toHaveAttribute("data-running", "1");
  await expect(page.getByTestId("rollout-wait").first()).toBeVisible();
  await page.getByRole("button", { name: "Approve" }).click();
  await confirm(page, "Yes, approve");
  await expect(status).toHaveAttribute("data-status", "completed", { timeout: 60_000 });
  await expect(batch(1)).toHaveAttribute("data-running", "1");
  await expect(page.locator('[data-testid="rollout-event"][data-kind]').first()).toBeVisible();
  await expect(page.getByTestId("rollout-chart")).not.toHaveAttribute("data-points", "0");

  // The agents really run it (their reports, not the desired state).
  await expect
    .poll(async () => {
      const deployment = await query<Deployment>(page, "app.deployment", { id: appId });
      return deployment.versions.find((v) => v.version === "1.0.0")?.observed.byState.running ?? 0;
    })
    .toBe(2);

  // Roll back: the nodes had no version before, so the app leaves them.
  await page.getByRole("button", { name: "Roll back" }).click();
  await confirm(page, "Yes, roll back");
  await expect(status).toHaveAttribute("data-status", "rolled_back", { timeout: 60_000 });
  await expect
    .poll(async () => (await query<Deployment>(page, "app.deployment", { id: appId })).instances, {
      timeout: 30_000,
    })
    .toBe(0);
  await visit(page, `/apps/${appId}`);
  await expect(page.getByTestId("rollout-row")).toHaveAttribute("data-status", "rolled_back");
});

test("a rollout with a site uplink budget shows the site's use, measured at its leaf's link, with the cache the leaf got from the console's bundle", async ({
  page,
}) => {
  const NATS_SERVER_BIN = process.env.NATS_SERVER_BIN;
  if (!NATS_SERVER_BIN) throw new Error("NATS_SERVER_BIN unset: export the stack's stack.env");
  natsOfStack();
  test.setTimeout(300_000);
  const suffix = randomBytes(3).toString("hex");
  await signInAs(page, "alice");

  // A site whose leaf runs from the console's bundle (the site artifact cache on by default).
  const site = await mutate<{ id: string; name: string }>(page, "site.create", { name: `e2e-up-${suffix}` });
  const dir = mkdtempSync(join(tmpdir(), "ef-e2e-uplink-"));
  const leafPort = await freePort();
  const bundle = await mutate<{ files: Array<{ name: string; content: string }> }>(page, "site.leafBundle", {
    id: site.id,
    listen: `127.0.0.1:${leafPort}`,
    credentialsPath: join(dir, "site.creds"),
    siteCacheDir: join(dir, "site-cache"),
    siteCacheMaxMiB: 64,
  });
  for (const file of bundle.files) writeFileSync(join(dir, file.name), file.content, { mode: 0o600 });
  expect(readFileSync(join(dir, "leaf.conf"), "utf8")).toContain(`domain: "efsite-${site.id}"`);
  leafServer = spawn(NATS_SERVER_BIN, ["-c", join(dir, "leaf.conf")], { stdio: "ignore" });

  // Three agents at the site, downloading artifacts for real.
  const prefix = `acme-e2e-up-${suffix}`;
  await agents.start(page, {
    prefix,
    count: 3,
    label: `e2e-uplink=${suffix}`,
    fetchArtifacts: true,
    site: { id: site.id, leafUrl: `nats://127.0.0.1:${leafPort}` },
  });
  await expectNodesOnline(page, prefix, 3, 90_000);

  // An app with a 4 MB version.
  await createApp(page, `e2e-up-${suffix}`);
  const row = await addVersion(page, {
    version: "1.0.0",
    command: "./collector",
    file: "collector.bin",
    content: randomBytes(4_000_000),
  });
  await expect(row.getByTestId("artifact-state")).toHaveAttribute("data-state", "ready", { timeout: 60_000 });

  // The rollout: one canary, then the rest without a pause, the site's uplink budgeted to 1 MB/s.
  await row.getByRole("link", { name: "Roll out" }).click();
  await page.getByRole("textbox", { name: "Label selector" }).fill(`e2e-uplink=${suffix}`);
  await page.getByRole("button", { name: "Remove batch 2" }).click();
  await page.getByRole("combobox", { name: "Batch 1 pause after" }).selectOption("none");
  await page.getByRole("textbox", { name: "Site uplink budget in MB per second" }).fill("1");
  await page.getByRole("button", { name: "Preview" }).click();
  await expect(page.getByTestId("plan-to-update")).toHaveText("3");
  await page.getByRole("button", { name: "Start rollout" }).click();
  await expect(page).toHaveURL(/\/rollouts\/[0-9a-f-]{36}$/);

  // While it moves and after: the site's row, measured at the hub on the leaf's link.
  const uplink = page.locator(`[data-testid="site-uplink-row"][data-site="${site.name}"]`);
  await expect(uplink).toBeVisible({ timeout: 30_000 });
  await expect(uplink.getByTestId("uplink-budget")).toHaveText("1 MB/s");
  await expect(page.getByTestId("rollout-status")).toHaveAttribute("data-status", "completed", {
    timeout: 120_000,
  });
  await expect(uplink).toHaveAttribute("data-cache", "seeded");
  // The seed crossed the uplink once (4 MB, the meter's first reading may come a moment after it
  // began), at no more than the budget plus one interval's chunk.
  const bytes = Number(await uplink.getAttribute("data-bytes"));
  const peak = Number(await uplink.getAttribute("data-peak"));
  expect(bytes).toBeGreaterThan(1_000_000);
  expect(bytes).toBeLessThan(4_000_000 * 1.1);
  expect(peak).toBeGreaterThan(500_000);
  expect(peak).toBeLessThanOrEqual(1_100_000);
  await expect(page.getByTestId("site-uplink-chart")).not.toHaveAttribute("data-points", "0");
  rmSync(dir, { recursive: true, force: true });
});

test("a viewer sees every rollout and app action disabled with the reason", async ({ page }) => {
  await signInAs(page, "carol");
  const { hits } = await query<{ hits: Array<{ kind: string; id: string }> }>(page, "search.byName", {
    query: "telemetry-collector",
  });
  const rollout = hits.find((hit) => hit.kind === "rollout");
  const app = hits.find((hit) => hit.kind === "app");
  if (!rollout || !app) throw new Error(`seeded rollout or app missing: ${JSON.stringify(hits)}`);

  await visit(page, `/rollouts/${rollout.id}`);
  const actions = page.getByTestId("rollout-actions");
  for (const name of ["Start", "Approve", "Pause", "Resume", "Abort", "Roll back"]) {
    await expect(actions.getByRole("button", { name, exact: true })).toBeDisabled();
  }
  await expect(page.getByTestId("actions-denied")).toHaveText(
    "Actions disabled: needs the operator role; you are viewer",
  );

  await visit(page, "/apps");
  await expect(page.getByRole("button", { name: "Create app" })).toBeDisabled();
  await expect(page.getByText("Disabled: needs the operator role; you are viewer")).toBeVisible();
  await visit(page, `/apps/${app.id}`);
  await expect(page.getByRole("button", { name: "Add version" })).toBeDisabled();
  await expect(page.getByRole("button", { name: "Roll out" }).first()).toBeDisabled();
});
