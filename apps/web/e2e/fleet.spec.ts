import { expect, test } from "@playwright/test";
import { menuItem } from "./console";
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
  const total = Number(await page.getByTestId("count-total").textContent());

  const names = await visibleNodeNames(page);
  expect(names.length).toBeGreaterThan(0);
  for (const name of names) expect(name).toMatch(/^acme-/);
  await expect(page.getByText(/globex-/)).toHaveCount(0);
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

  // The page says so…
  await page.reload();
  await expect(page.getByText(/not a member of organization “globex”/)).toBeVisible();
  await expect(page.getByText(/globex-/)).toHaveCount(0);

  // …and the API itself refuses, whatever the page does.
  for (const path of [
    "/api/trpc/node.counts",
    `/api/trpc/node.list?input=${encodeURIComponent('{"json":{"limit":200}}')}`,
  ]) {
    const response = await page.request.get(path);
    expect(response.status()).toBe(404);
    const body = await response.text();
    expect(body).toContain("NOT_FOUND");
    expect(body).not.toContain("globex-");
  }
});

test("signing out ends the Keycloak session too", async ({ page }) => {
  await signInAs(page, "alice");
  await (await menuItem(page, /^Account/, "Sign out")).click();
  // Keycloak logs out and returns to the console, which sends the anonymous visitor to sign in;
  // with the SSO session gone Keycloak shows its form instead of signing alice straight back in.
  await expect(page).toHaveURL(keycloakLoginUrl);
  await expect(page.locator("#kc-login")).toBeVisible();

  await page.goto("/fleet");
  await expect(page).toHaveURL(keycloakLoginUrl);
  await expect(page.locator("#kc-login")).toBeVisible();
});
