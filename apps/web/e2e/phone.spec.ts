import { expect, type Page, test } from "@playwright/test";
import { consolePages } from "./console";
import { signInAs, visit } from "./keycloak";

/** The page is no wider than the screen: nothing makes the whole page scroll sideways. */
async function expectNoHorizontalOverflow(page: Page, name: string) {
  await expect
    .poll(
      () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
      {
        message: `${name} overflows horizontally`,
      },
    )
    .toBeLessThanOrEqual(0);
  await test.info().attach(`${name} at 390px`, {
    body: await page.screenshot({ fullPage: true }),
    contentType: "image/png",
  });
}

test("every page fits a phone screen (390 px) and every page is reachable by thumb", async ({ page }) => {
  test.setTimeout(180_000);
  await page.setViewportSize({ width: 390, height: 844 });
  await signInAs(page, "alice");
  for (const { name, path, ready } of await consolePages(page)) {
    await visit(page, path);
    await expect(ready, name).toBeVisible();
    await expectNoHorizontalOverflow(page, name);
  }

  // The bottom bar: the main pages, search and a drawer with every page.
  await visit(page, "/fleet");
  const bar = page.getByRole("navigation", { name: "Phone navigation" });
  await expect(bar).toBeInViewport();
  await bar.getByRole("link", { name: "Nodes" }).click();
  await expect(page).toHaveURL(/\/nodes$/);
  await expect(bar.getByRole("link", { name: "Nodes" })).toHaveAttribute("aria-current", "page");
  await bar.getByRole("button", { name: "More" }).click();
  const drawer = page.getByRole("dialog");
  for (const name of [
    "Fleet",
    "Nodes",
    "Sites",
    "Apps",
    "Rollouts",
    "Enrollment",
    "Members",
    "API keys",
    "Audit log",
  ]) {
    await expect(drawer.getByRole("link", { name, exact: true })).toBeInViewport();
  }
  await drawer.getByRole("link", { name: "Audit log", exact: true }).click();
  await expect(page).toHaveURL(/\/audit$/);
  await expect(drawer).toHaveCount(0);
  await bar.getByRole("button", { name: "Search" }).click();
  await expect(page.getByRole("combobox", { name: "Find anything" })).toBeFocused();
});
