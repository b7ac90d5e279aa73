import { expect, test } from "@playwright/test";
import { confirm, toast } from "./console";
import { signInAs, visit } from "./keycloak";

test("an API key made in the console is shown once, works over REST, and answers 401 once revoked", async ({
  page,
}) => {
  await signInAs(page, "alice");
  await visit(page, "/api-keys");
  const name = `e2e-console-key-${Date.now()}`;
  await page.getByLabel("Key name").fill(name);
  await page.getByLabel("Key role").selectOption("viewer");
  await page.getByRole("button", { name: "Create key" }).click();

  const secret = (await page.getByTestId("secret").textContent())?.trim() ?? "";
  expect(secret).toMatch(/^efk_[A-Za-z0-9_-]{43}$/);
  await expect(page.getByRole("region", { name: "API key", exact: true })).toContainText("shown only once");

  // The key works against the REST API with plain fetch, outside the browser session.
  const baseURL = process.env.WEB_URL ?? "";
  const asKey = () =>
    fetch(new URL("/api/v1/members", baseURL), { headers: { authorization: `Bearer ${secret}` } });
  const allowed = await asKey();
  expect(allowed.status).toBe(200);
  expect(((await allowed.json()) as { items: Array<{ email: string }> }).items.map((m) => m.email)).toContain(
    "alice@acme.example",
  );

  // Once dismissed, and after a reload, the secret is nowhere on the page; the list shows its prefix and use.
  await page.getByRole("button", { name: "I have stored it" }).click();
  await page.reload();
  const row = page.locator(`[data-testid="api-key-row"][data-name="${name}"]`);
  await expect(row).toContainText(secret.slice(0, 12));
  await expect(row).toContainText("alice@acme.example");
  await expect(row.locator('[data-label="Last used"]')).not.toHaveText("never");
  expect(await page.content()).not.toContain(secret);

  await row.getByRole("button", { name: "Revoke" }).click();
  await confirm(page, "Yes, revoke");
  await expect(toast(page, `API key “${name}” revoked`)).toBeVisible();
  await expect(row.getByTestId("api-key-state")).toContainText("revoked");

  const refused = await asKey();
  expect(refused.status).toBe(401);
  expect(await refused.json()).toMatchObject({ code: "UNAUTHORIZED" });
});

test("a key name already in use gets the server's clear error", async ({ page }) => {
  await signInAs(page, "alice");
  await visit(page, "/api-keys");
  const name = `e2e-dup-${Date.now()}`;
  for (let i = 0; i < 2; i++) {
    await page.getByLabel("Key name").fill(name);
    await page.getByRole("button", { name: "Create key" }).click();
    if (i === 0) await page.getByRole("button", { name: "I have stored it" }).click();
  }
  await expect(
    page.getByRole("alert").filter({ hasText: `an API key named "${name}" exists already` }),
  ).toBeVisible();
});
