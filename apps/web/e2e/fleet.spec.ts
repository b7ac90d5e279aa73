import { expect, test } from "@playwright/test";
import { keycloakLoginUrl, signInAs, visibleNodeNames } from "./keycloak";

test("an unauthenticated visit to /fleet ends on the Keycloak login page", async ({ page }) => {
  await page.goto("/fleet");
  await expect(page).toHaveURL(keycloakLoginUrl);
  await expect(page.locator("#kc-login")).toBeVisible();
});

test("alice signs in through Keycloak and sees only Acme's nodes", async ({ page }) => {
  await signInAs(page, "alice");
  await expect(page.getByRole("heading", { name: /Acme Energy/ })).toBeVisible();
  await expect(page.getByTestId("user-email")).toHaveText("alice@acme.example");

  const names = await visibleNodeNames(page);
  expect(names.length).toBeGreaterThan(0);
  for (const name of names) expect(name).toMatch(/^acme-/);
  await expect(page.getByText(/globex-/)).toHaveCount(0);

  const total = Number(await page.getByTestId("count-total").textContent());
  expect(total).toBeGreaterThanOrEqual(names.length);
});

test("bob signs in through Keycloak and sees only Globex's nodes", async ({ page }) => {
  await signInAs(page, "bob");
  await expect(page.getByRole("heading", { name: /Globex Logistics/ })).toBeVisible();

  const names = await visibleNodeNames(page);
  expect(names.length).toBeGreaterThan(0);
  for (const name of names) expect(name).toMatch(/^globex-/);
  await expect(page.getByText(/acme-/)).toHaveCount(0);
});

test("a forged active-organization cookie gets an error, not another tenant's nodes", async ({
  page,
  context,
}) => {
  await signInAs(page, "alice");
  await visibleNodeNames(page);

  const { hostname } = new URL(page.url());
  await context.addCookies([{ name: "edgefleet-org", value: "globex", domain: hostname, path: "/" }]);
  await page.reload();

  await expect(page.getByRole("alert")).toContainText(/not a member/);
  await expect(page.getByText(/globex-/)).toHaveCount(0);
  await expect(page.getByTestId("node-name")).toHaveCount(0);
});

test("signing out ends the Keycloak session too", async ({ page }) => {
  await signInAs(page, "alice");
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL((url) => !url.pathname.includes("/logout"));
  await page.goto("/fleet");
  // Without a Keycloak SSO session the login form is shown again instead of an instant redirect.
  await expect(page).toHaveURL(keycloakLoginUrl);
  await expect(page.locator("#kc-login")).toBeVisible();
});
