import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, test } from "@playwright/test";
import { consolePages, menuItem } from "./console";
import { signInAs, visit } from "./keycloak";

// axe-core on every page of the console, in the light and the dark theme (the console follows the
// system's colour scheme), with the command palette and a confirmation dialog open as well.

const WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];

async function seriousViolations(page: Page) {
  const results = await new AxeBuilder({ page }).withTags(WCAG).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5),
    }));
}

for (const colorScheme of ["light", "dark"] as const) {
  test(`every page has no serious or critical axe violations in the ${colorScheme} theme`, async ({
    page,
  }) => {
    test.setTimeout(180_000);
    await page.emulateMedia({ colorScheme, reducedMotion: "reduce" });
    await signInAs(page, "alice");
    await expect(page.locator("html")).toHaveClass(new RegExp(`\\b${colorScheme}\\b`));
    for (const { name, path, ready } of await consolePages(page)) {
      await visit(page, path);
      await expect(ready, name).toBeVisible();
      expect(await seriousViolations(page), `${name} (${colorScheme})`).toEqual([]);
    }

    // Overlays: the command palette with results, and a confirmation dialog.
    await visit(page, "/sites");
    // Rows come from a client query: the page has hydrated and the shortcut listens.
    await expect(page.getByTestId("site-row").first()).toBeVisible();
    await page.keyboard.press("Control+k");
    await page.getByRole("combobox", { name: "Find anything" }).fill("plant");
    await expect(page.getByRole("option", { name: /acme-plant/ }).first()).toBeVisible();
    expect(await seriousViolations(page), `command palette (${colorScheme})`).toEqual([]);
    await page.keyboard.press("Escape");
    await visit(page, "/api-keys");
    const revoke = page.getByRole("button", { name: "Revoke" }).first();
    if (await revoke.count()) {
      await revoke.click();
      await expect(page.getByRole("alertdialog")).toBeVisible();
      expect(await seriousViolations(page), `confirmation dialog (${colorScheme})`).toEqual([]);
      await page.getByRole("button", { name: "Cancel" }).click();
    }
  });
}

test("the theme follows the system and the switch overrides it, remembered across pages", async ({
  page,
}) => {
  await page.emulateMedia({ colorScheme: "dark" });
  await signInAs(page, "alice");
  await expect(page.locator("html")).toHaveClass(/\bdark\b/);
  await (await menuItem(page, "Theme", "Light", "menuitemradio")).click();
  await expect(page.locator("html")).toHaveClass(/\blight\b/);
  await visit(page, "/nodes");
  await expect(page.locator("html")).toHaveClass(/\blight\b/);
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await (await menuItem(page, "Theme", "System", "menuitemradio")).click();
  await expect(page.locator("html")).toHaveClass(/\bdark\b/);
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).not.toBe(background);
});
