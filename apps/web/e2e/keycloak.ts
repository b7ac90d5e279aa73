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
}

/** Names of the nodes in the fleet table once it has rendered. */
export async function visibleNodeNames(page: Page): Promise<string[]> {
  const names = page.getByTestId("node-name");
  await expect(names.first()).toBeVisible();
  return names.allTextContents();
}
