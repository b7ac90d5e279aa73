import { expect, type Page } from "@playwright/test";

export const DEMO_PASSWORD = "edgefleet";

/** Keycloak's authorization endpoint for the edgefleet realm, wherever Keycloak runs. */
export const keycloakLoginUrl = /\/realms\/edgefleet\/protocol\/openid-connect\/auth\?/;

/** Opens /fleet, fills Keycloak's own login form and waits to be back on the fleet page. */
export async function signInAs(page: Page, username: string): Promise<void> {
  await page.goto("/fleet");
  await expect(page).toHaveURL(keycloakLoginUrl);
  await page.locator("#username").fill(username);
  // With organizations enabled Keycloak asks for the username first (identity-first login, so
  // it can route to an organization's identity provider) and for the password on a second page.
  if (!(await page.locator("#password").isVisible())) await page.locator("#kc-login").click();
  await page.locator("#password").fill(DEMO_PASSWORD);
  await page.locator("#kc-login").click();
  await expect(page).toHaveURL(/\/fleet$/);
  await hydrated(page);
}

/** Waits until React has hydrated the page (components/providers.tsx marks <html>). */
export async function hydrated(page: Page): Promise<void> {
  await expect(page.locator("html[data-hydrated]")).toHaveCount(1, { timeout: 30_000 });
}

/** Opens a console page and waits until it has hydrated, so that clicks and keys take effect. */
export async function visit(page: Page, path: string): Promise<void> {
  await page.goto(path);
  await hydrated(page);
}

/** Names of the nodes in the /nodes table once it has rendered (only the rows in view: it is virtualized). */
export async function visibleNodeNames(page: Page): Promise<string[]> {
  if (!new URL(page.url()).pathname.startsWith("/nodes")) await visit(page, "/nodes");
  const names = page.getByTestId("node-name");
  await expect(names.first()).toBeVisible();
  return names.allTextContents();
}
