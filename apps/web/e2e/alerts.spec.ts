import { expect, test } from "@playwright/test";
import { confirm, mutate, query, toast } from "./console";
import { signInAs, visit } from "./keycloak";

/**
 * The Alerts page end to end on the test stack: a PromQL policy that always holds (vector(1),
 * labelled with a seeded node) is compiled by the gateway into the organization's Mimir ruler,
 * fires within one evaluation interval and shows under "Firing now"; the row's silence button
 * silences the node (listed, the alert shown as silenced), and expiring it makes the alert
 * active again.
 */
test("an operator creates a policy, sees it fire, silences its node and expires the silence", async ({
  page,
}) => {
  // Rule sync and one evaluation interval (30 s on the test stack) before the alert fires.
  test.setTimeout(180_000);
  await signInAs(page, "alice");
  await visit(page, "/alerts");
  const { hits } = await query<{ hits: Array<{ kind: string; id: string; name: string }> }>(
    page,
    "search.byName",
    {
      query: "acme-plant-9-01",
    },
  );
  const node = hits.find((hit) => hit.kind === "node" && hit.name === "acme-plant-9-01");
  if (!node) throw new Error(`seeded node missing: ${JSON.stringify(hits)}`);

  const name = `e2e-always-${Date.now()}`;
  await page.getByLabel("Policy name").fill(name);
  await page.getByLabel("Policy kind").selectOption("promql");
  await page.getByLabel("Policy severity").selectOption("warning");
  await page.getByLabel("PromQL").fill(`label_replace(vector(1), "node", "${node.id}", "", "")`);
  await page.getByLabel("For (minutes)").fill("0");
  await page.getByRole("button", { name: "Create policy" }).click();
  await expect(toast(page, `Policy ${name} created`)).toBeVisible();
  const policyRow = page.getByTestId("policy-row").filter({ has: page.getByText(name, { exact: true }) });
  await expect(policyRow).toBeVisible();

  try {
    const firing = page.locator(`[data-testid="firing-row"][data-name="${name}"]`);
    await expect(firing).toHaveAttribute("data-state", "active", { timeout: 120_000 });
    await expect(firing.getByRole("link", { name: "acme-plant-9-01" })).toBeVisible();

    await firing.getByRole("button", { name: "Silence acme-plant-9-01 1 h" }).click();
    await expect(toast(page, "acme-plant-9-01 silenced for an hour")).toBeVisible();
    const silence = page.locator(
      '[data-testid="silence-row"][data-name="acme-plant-9-01"][data-state="active"]',
    );
    await expect(silence).toHaveCount(1);
    await expect(firing).toHaveAttribute("data-state", "silenced");

    await silence.getByRole("button", { name: "Expire" }).click();
    await confirm(page, "Expire");
    await expect(toast(page, "Silence of acme-plant-9-01 expired")).toBeVisible();
    await expect(silence).toHaveCount(0);
    await expect(firing).toHaveAttribute("data-state", "active");
  } finally {
    const policies = await query<Array<{ id: string; name: string }>>(page, "alert.policies", undefined);
    const created = policies.find((policy) => policy.name === name);
    if (created) await mutate(page, "alert.deletePolicy", { id: created.id });
  }
});
