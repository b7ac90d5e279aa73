import { randomBytes } from "node:crypto";
import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, test } from "@playwright/test";
import { expectNodesOnline, hollowAgents, natsOfStack } from "./agents";
import { addVersion, createApp } from "./apps";
import { query } from "./console";
import { signInAs } from "./keycloak";
import { acmeId, writeToMimir } from "./mimir";

// Metric gates in the console (issue 11): an operator adds gates from presets on /rollouts/new
// (a PromQL check against Mimir and a window longer than the timeout are refused on their fields),
// starts the rollout, the live page charts the canary against the baseline while the batch's window
// is open, and then shows the verdict the test stack's own controller wrote,
// with its canary-vs-baseline chart and numbers. Every part is real: hollow agents download and run
// the version; the canary's per-app CPU is written to Mimir by remote write as the gateway writes it
// (the test stack's agents report every 60 s, too slowly for a short window), burning 90 % of a core
// against a 50 % threshold, so the controller fails the batch and rolls it back by itself.

const MIMIR_URL = process.env.MIMIR_URL;
const WINDOW_S = 45;
const WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];

/** axe on the page states this spec reaches (the a11y spec's pages have no gates). */
async function seriousViolations(page: Page) {
  const results = await new AxeBuilder({ page }).withTags(WCAG).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) }));
}

const agents = hollowAgents();

/** The canary's app CPU, every 5 s from a minute ago to 5 minutes ahead (Mimir takes samples up to 10 min ahead). */
async function writeCanaryCpu(page: Page, nodeIds: string[], app: string, version: string): Promise<void> {
  const acme = await acmeId(page);
  const now = Math.floor(Date.now() / 1000) * 1000;
  const samples = Array.from({ length: 72 }, (_, i) => ({
    timestamp: now - 60_000 + i * 5_000,
    value: 0.9 + (i % 3) / 100,
  }));
  await writeToMimir(
    acme,
    nodeIds.map((node) => ({
      labels: { __name__: "edgefleet_app_cpu_usage_ratio", org: acme, node, app, version },
      samples,
    })),
  );
}

test("an operator gates a canary on app CPU; the live page shows the failed verdict with its chart and numbers, and the rollback", async ({
  page,
}) => {
  if (!MIMIR_URL) throw new Error("MIMIR_URL unset: export the stack's stack.env");
  natsOfStack();
  test.setTimeout(300_000);
  const suffix = randomBytes(3).toString("hex");
  await signInAs(page, "alice");

  // Four live agents on two kinds of hardware, labelled so the rollout targets only them.
  const prefix = `acme-e2e-gates-${suffix}`;
  await agents.start(page, { prefix, count: 4, label: `e2e-gates=${suffix}`, fetchArtifacts: true });

  // An app with one uploaded version.
  const appName = `e2e-gates-${suffix}`;
  await createApp(page, appName);
  const row = await addVersion(page, {
    version: "2.0.0",
    command: "./svc",
    file: "svc.bin",
    content: Buffer.from(`#!/bin/sh\necho svc ${suffix}\n`.repeat(500)),
  });
  await expect(row.getByTestId("artifact-state")).toHaveAttribute("data-state", "ready", { timeout: 30_000 });
  await expectNodesOnline(page, prefix, 4);

  // The rollout: a canary of two nodes with gates from presets.
  await row.getByRole("link", { name: "Roll out" }).click();
  await expect(page).toHaveURL(/\/rollouts\/new\?/);
  await expect(page.getByRole("combobox", { name: "Version" })).toHaveValue(/[0-9a-f-]{36}/);
  await page.getByRole("textbox", { name: "Label selector" }).fill(`e2e-gates=${suffix}`);
  await page.getByRole("button", { name: "Remove batch 2" }).click();
  await page.getByRole("textbox", { name: "Batch 1 count" }).fill("2");
  await page.getByRole("combobox", { name: "Batch 1 pause after" }).selectOption("none");

  // Custom PromQL is checked against Mimir on the spot: a parse error lands on the field.
  await page.getByRole("combobox", { name: "Batch 1 gate to add" }).selectOption("promql");
  await page.getByRole("button", { name: "Add gate to batch 1" }).click();
  const promql = page.getByRole("textbox", { name: "Batch 1 gate 1 PromQL" });
  await promql.fill("sum by (node) (rate(edgefleet_app_restarts_total[$window])");
  await page.getByRole("button", { name: "Check against Mimir" }).click();
  await expect(page.getByText(/Mimir refused the query: .*parse error/)).toBeVisible();
  await promql.fill("sum by (node) (rate(edgefleet_app_restarts_total[$window]))");
  await page.getByRole("button", { name: "Check against Mimir" }).click();
  await expect(page.getByTestId("promql-check")).toContainText("Valid:");
  await page.getByRole("button", { name: "Remove batch 1 gate 1" }).click();

  // Two app-CPU gates from the preset: a comparison with the baseline and an absolute threshold.
  await page.getByRole("combobox", { name: "Batch 1 gate to add" }).selectOption("app_cpu");
  await page.getByRole("button", { name: "Add gate to batch 1" }).click();
  await page.getByRole("button", { name: "Add gate to batch 1" }).click();
  await expect(page.getByRole("textbox", { name: "Batch 1 gate 2 name" })).toHaveValue("app-cpu-2");
  await page.getByRole("textbox", { name: "Batch 1 gate 1 window" }).fill(String(WINDOW_S));
  // A window longer than the batch's timeout is refused on the window's field.
  const window2 = page.getByRole("textbox", { name: "Batch 1 gate 2 window" });
  await window2.fill("4000");
  await window2.blur();
  await expect(page.getByText(/window \(4000 s\) is longer than the batch timeout \(1800 s\)/)).toBeVisible();
  await window2.fill(String(WINDOW_S));
  await page.getByRole("combobox", { name: "Batch 1 gate 2 criterion" }).selectOption("threshold");
  await page.getByRole("textbox", { name: "Batch 1 gate 2 max" }).fill("0.5");

  expect(await seriousViolations(page), "new rollout with gates").toEqual([]);
  await page.getByRole("button", { name: "Preview" }).click();
  await expect(page.getByTestId("plan-batch")).toHaveCount(2);
  await expect(page.getByTestId("plan-canary")).toContainText("stratified across sites and hardware");
  await page.getByRole("button", { name: "Start rollout" }).click();
  await expect(page).toHaveURL(/\/rollouts\/[0-9a-f-]{36}$/);
  const rolloutId = page.url().split("/").at(-1) as string;

  // The canary burns CPU (written to Mimir as the gateway writes agents' metrics).
  const canary = await query<{ items: Array<{ nodeId: string }> }>(page, "rollout.nodes", {
    id: rolloutId,
    batch: 0,
  });
  expect(canary.items).toHaveLength(2);
  await writeCanaryCpu(
    page,
    canary.items.map((n) => n.nodeId),
    appName,
    "2.0.0",
  );

  // Live: the gated batch is watched once its nodes run the version, then judged by the controller.
  const batch = page.locator('[data-testid="gated-batch"][data-batch="0"]');
  await expect(batch).toHaveAttribute("data-state", /installing|watching|judging|judged/);
  // While its window is open, before any verdict: the canary against the baseline so far.
  await expect(batch).toHaveAttribute("data-state", "watching", { timeout: 120_000 });
  await expect(batch.getByTestId("gate-live")).toBeVisible();
  await expect(batch.locator('[data-gate="app-cpu-2"] [data-testid="gate-live-chart"]')).not.toHaveAttribute(
    "data-points",
    "0",
    { timeout: 30_000 },
  );
  expect(await seriousViolations(page), "rollout page with a gated batch in its window").toEqual([]);
  await expect(batch).toHaveAttribute("data-outcome", "fail", { timeout: 180_000 });
  await expect(batch.getByTestId("gated-batch-reason")).toContainText("the rollout rolls back");

  const threshold = batch.locator('[data-testid="gate-verdict"][data-gate="app-cpu-2"]');
  await expect(threshold).toHaveAttribute("data-outcome", "fail");
  await expect(threshold.getByTestId("gate-threshold")).toContainText("≤ 0.5: 2 node(s) outside, 0 allowed");
  const chart = threshold.getByTestId("gate-chart");
  await expect(chart).not.toHaveAttribute("data-points", "0");
  // The canary's line is drawn through its points. (Not toBeVisible: the canary's CPU here is
  // constant, and a horizontal SVG path has an empty bounding box, which Playwright calls hidden.)
  await expect(chart).toBeVisible();
  await expect(chart.locator(".recharts-line-curve").first()).toHaveAttribute("d", /^M[-\d.,]+(L[-\d.,]+)+$/);

  // No node runs another version: the comparison has no baseline, its own outcome, never a pass.
  const compare = batch.locator('[data-testid="gate-verdict"][data-gate="app-cpu"]');
  await expect(compare).toHaveAttribute("data-outcome", "no_data");

  await expect(page.getByTestId("rollout-status")).toHaveAttribute("data-status", "rolled_back", {
    timeout: 90_000,
  });
  expect(await seriousViolations(page), "rollout page with gate verdicts").toEqual([]);
});
