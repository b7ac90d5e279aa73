import { expect, test } from "@playwright/test";
import { toast } from "./console";
import { signInAs, visibleNodeNames } from "./keycloak";
import { acmeId, writeToMimir } from "./mimir";

const MIMIR_URL = process.env.MIMIR_URL;

test("a label selector in /nodes shows exactly the matching rows, and a bad one an inline error", async ({
  page,
}) => {
  await signInAs(page, "alice");
  await visibleNodeNames(page);

  const selector = page.getByLabel("Label selector");
  await selector.fill("site=plant-7,tier=canary");
  // The seed makes the first two nodes of every site canaries.
  await expect(page.getByTestId("node-name")).toHaveText(["acme-plant-7-01", "acme-plant-7-02"]);

  await selector.fill("site=plant-7,tier!=canary,!nosuchlabel");
  await expect(page.getByTestId("node-name").first()).toHaveText("acme-plant-7-03");
  for (const name of await page.getByTestId("node-name").allTextContents()) {
    expect(name).toMatch(/^acme-plant-7-0[3-8]$/);
  }

  // Judged in the browser by the API's own schema as it is typed; the rows stay as they were.
  await selector.fill("env in (prod");
  await expect(selector).toHaveAccessibleDescription(
    'invalid selector at position 12: expected "," or ")", found end of input',
  );
  await expect(selector).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByTestId("node-name").first()).toHaveText("acme-plant-7-03");
  expect(new URL(page.url()).searchParams.get("selector")).toBe("site=plant-7,tier!=canary,!nosuchlabel");
});

test("selected rows get labels added and removed through the bulk labels panel", async ({ page }) => {
  await signInAs(page, "alice");
  await visibleNodeNames(page);
  const key = `e2ebulk${Date.now()}`;
  await page.getByLabel("Label selector").fill("site=plant-7,tier=canary");
  await expect(page.getByTestId("node-name")).toHaveText(["acme-plant-7-01", "acme-plant-7-02"]);
  await page.getByRole("checkbox", { name: "Select all loaded nodes" }).check();

  await page.getByRole("button", { name: "Edit labels (2 selected)" }).click();
  const panel = page.getByRole("form", { name: "Edit labels" });
  await panel.getByLabel("Labels to add").fill(`${key}=yes`);
  await panel.getByRole("button", { name: "Apply to 2 selected" }).click();
  await expect(toast(page, "2 nodes updated")).toBeVisible();
  await page.getByLabel("Label selector").fill(`${key}=yes`);
  await expect(page.getByTestId("node-name")).toHaveText(["acme-plant-7-01", "acme-plant-7-02"]);

  // The selector's nodes lose the key again: the panel's other target.
  await page.getByRole("button", { name: /^Edit labels/ }).click();
  await panel.getByLabel("Label keys to remove").fill(key);
  await panel.getByRole("button", { name: "Apply to all matching selector" }).click();
  await expect(page.getByTestId("empty-state")).toContainText("No nodes match.");
});

test("node detail shows its identity, apps and a CPU chart from Mimir", async ({ page }) => {
  if (!MIMIR_URL) throw new Error("MIMIR_URL is not set: export the test stack's stack.env");
  await signInAs(page, "alice");
  await visibleNodeNames(page);
  await page.getByLabel("Label selector").fill("site=plant-9,tier=canary");
  await expect(page.getByTestId("node-name")).toHaveCount(2);
  await page.getByTestId("node-name").first().click();
  await expect(page.getByTestId("node-title")).toHaveText("acme-plant-9-01");
  await expect(page.getByTestId("apps-table")).toContainText("telemetry-collector");
  const nodeId = new URL(page.url()).pathname.split("/").at(-1) ?? "";

  // Samples for this node under acme's tenant, as the gateway writes them.
  const acme = await acmeId(page);
  const now = Math.floor(Date.now() / 1000) * 1000;
  const samples = Array.from({ length: 10 }, (_, i) => ({
    timestamp: now - (10 - i) * 30_000,
    value: 0.1 + i / 50,
  }));
  // A label of its own per run: Mimir refuses samples older than a series' newest one, and the
  // test stack's Mimir keeps the series of earlier runs.
  await writeToMimir(acme, [
    {
      labels: { __name__: "edgefleet_node_cpu_usage_ratio", org: acme, node: nodeId, e2e_run: String(now) },
      samples,
    },
  ]);

  await page.getByRole("button", { name: "15m" }).click();
  const cpu = page.getByTestId("chart-cpu");
  // first(): on the dev stack the node is a live agent, whose own series is drawn beside this one.
  await expect(cpu.locator(".recharts-line-curve").first()).toBeVisible();
  expect(Number(await cpu.getAttribute("data-points"))).toBeGreaterThan(1);
});
