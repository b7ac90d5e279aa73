import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { expect, test } from "@playwright/test";
import { confirm, mutate, query } from "./console";
import { signInAs, visit } from "./keycloak";

// Apps, versions and rollouts end to end: real hollow agents (real protocol, real artifact
// download through the gateway and NATS, SHA-256 checked) receive the version a rollout sends.

const NATS_URL = process.env.NATS_URL;
const NATS_ENROLL_CREDS = process.env.NATS_ENROLL_CREDS;
const AGENT_CLI = fileURLToPath(
  new URL("../../../packages/agent-sdk/bin/edgefleet-agent.mjs", import.meta.url),
);

interface Deployment {
  instances: number;
  versions: Array<{ version: string; observed: { byState: Record<string, number> } }>;
}

let agents: ChildProcess | null = null;
test.afterEach(() => {
  agents?.kill("SIGTERM");
  agents = null;
});

test("an operator creates an app and a version, previews and starts a rollout, approves it, watches it finish and rolls it back", async ({
  page,
}) => {
  if (!NATS_URL || !NATS_ENROLL_CREDS)
    throw new Error("NATS_URL / NATS_ENROLL_CREDS unset: export the stack's stack.env");
  test.setTimeout(240_000);
  const suffix = randomBytes(3).toString("hex");
  await signInAs(page, "alice");

  // Two live agents that download artifacts for real, labelled so the rollout targets only them.
  const prefix = `acme-e2e-rollout-${suffix}`;
  const token = await mutate<{ token: string }>(page, "enrollment.createToken", {
    description: prefix,
    maxUses: 2,
    expiresInHours: 1,
  });
  agents = spawn(
    process.execPath,
    [
      AGENT_CLI,
      "hollow",
      ...["--count", "2", "--token", token.token, "--url", NATS_URL, "--enroll-creds", NATS_ENROLL_CREDS],
      ...["--name-prefix", prefix, "--label", `e2e-rollout=${suffix}`, "--fetch-artifacts"],
    ],
    { stdio: "ignore" },
  );
  await expect
    .poll(
      async () => {
        const { hits } = await query<{ hits: Array<{ kind: string; detail: string | null }> }>(
          page,
          "search.byName",
          { query: prefix },
        );
        return hits.filter((hit) => hit.kind === "node" && hit.detail?.endsWith("online")).length;
      },
      { timeout: 60_000 },
    )
    .toBe(2);

  // The app.
  const appName = `e2e-${suffix}`;
  await visit(page, "/apps");
  await page.getByRole("textbox", { name: "App name" }).fill(appName);
  await page.getByRole("button", { name: "Create app" }).click();
  await expect(page.getByTestId("app-title")).toHaveText(appName);
  const appId = page.url().split("/").at(-1) as string;

  // A version with an uploaded artifact: a bad label is refused on the field before anything is sent.
  const addVersion = page.getByRole("form", { name: "Add a version" });
  await addVersion.getByRole("textbox", { name: "Version" }).fill("not a version!");
  await addVersion.getByRole("textbox", { name: "Command" }).click();
  await expect(addVersion.getByText(/version: 1-64 letters/)).toBeVisible();
  await addVersion.getByRole("textbox", { name: "Version" }).fill("1.0.0");
  await addVersion.getByRole("textbox", { name: "Command" }).fill("./collector --once");
  await addVersion.getByLabel("Artifact file").setInputFiles({
    name: "collector.bin",
    mimeType: "application/octet-stream",
    buffer: Buffer.from(`#!/bin/sh\necho collector ${suffix}\n`.repeat(2000)),
  });
  await addVersion.getByRole("button", { name: "Add version" }).click();
  await expect(page.getByTestId("upload-progress")).toBeVisible();
  const row = page.locator('[data-testid="version-row"][data-version="1.0.0"]');
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
