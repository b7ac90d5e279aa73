import { expect, type Page, test } from "@playwright/test";
import { signInAs } from "./keycloak";

// Keyboard only, once signed in (Keycloak's own form is not ours): the palette opens on Ctrl-K,
// runs "New enrollment token" which lands in the form, the token is made with Enter; then the
// palette finds a node by name and opens it, and the node list is walked with the arrow keys.

/** Ctrl-K, once the page has hydrated (the shortcut is a client-side listener). */
async function openPalette(page: Page) {
  const palette = page.getByRole("combobox", { name: "Find anything" });
  await expect(async () => {
    await page.keyboard.press("Control+k");
    await expect(palette).toBeFocused({ timeout: 1_000 });
  }).toPass({ timeout: 15_000 });
  return palette;
}

test("keyboard only: create an enrollment token and find a node through the command palette", async ({
  page,
}) => {
  // Three flows in one test (token, palette, table): more than the default minute on a busy machine.
  test.setTimeout(150_000);
  await signInAs(page, "alice");
  const keyboard = page.keyboard;

  await openPalette(page);
  await keyboard.type("new enrollment token");
  await expect(page.getByRole("option", { name: "New enrollment token" })).toHaveAttribute(
    "aria-selected",
    "true",
  );
  await keyboard.press("Enter");
  await expect(page).toHaveURL(/\/enrollment#new-token$/);
  const description = page.getByLabel("Token description");
  await expect(description).toBeFocused();
  const name = `keyboard-${Date.now()}`;
  await keyboard.type(name);
  // Through the rest of the form to the submit button, without the mouse.
  for (
    let i = 0;
    i < 12 &&
    !(await page
      .getByRole("button", { name: "Create token" })
      .evaluate((el) => el === document.activeElement));
    i++
  ) {
    await keyboard.press("Tab");
  }
  await expect(page.getByRole("button", { name: "Create token" })).toBeFocused();
  await keyboard.press("Enter");
  await expect(page.getByTestId("secret")).toHaveText(/^efe_/);
  await expect(page.getByTestId("token-row").filter({ hasText: name })).toHaveCount(1);

  await openPalette(page);
  await keyboard.type("acme-plant-9-01");
  const hit = page.getByRole("option", { name: /acme-plant-9-01/ });
  await expect(hit).toBeVisible();
  // Walk the list from the top to the node, as a person would: results may still be arriving
  // (the query is deferred and the previous answer is kept meanwhile), so the walk is retried.
  await expect(async () => {
    await keyboard.press("Home");
    for (let step = 0; step < 10 && (await hit.getAttribute("aria-selected")) !== "true"; step++) {
      await keyboard.press("ArrowDown");
    }
    await expect(hit).toHaveAttribute("aria-selected", "true", { timeout: 500 });
  }).toPass({ timeout: 15_000 });
  await keyboard.press("Enter");
  await expect(page.getByTestId("node-title")).toHaveText("acme-plant-9-01");
  await expect(page).toHaveURL(/\/nodes\/[0-9a-f-]{36}$/);

  // The node list: one tab stop for the rows, arrows move, Enter opens the focused row's node.
  await openPalette(page);
  await keyboard.type("nodes");
  await expect(page.getByRole("option", { name: "Nodes", exact: true })).toBeVisible();
  await page.getByRole("option", { name: "Nodes", exact: true }).press("Enter");
  await expect(page).toHaveURL(/\/nodes$/);
  const names = page.getByTestId("node-name");
  await expect(names.first()).toBeVisible();
  const firstRow = page.locator("[data-row]").first();
  await firstRow.focus();
  await keyboard.press("ArrowDown");
  await keyboard.press("ArrowDown");
  const third = (await page.locator("[data-row]").nth(2).getByTestId("node-name").textContent()) ?? "";
  await expect(page.locator("[data-row]").nth(2)).toBeFocused();
  await keyboard.press("Enter");
  await expect(page.getByTestId("node-title")).toHaveText(third);
});

test("the command palette only finds the signed-in organization's nodes", async ({ page }) => {
  await signInAs(page, "bob");
  await openPalette(page);
  await page.keyboard.type("globex-");
  // The search answered (bob's own nodes are found)…
  await expect(page.getByRole("option", { name: /globex-/ }).first()).toBeVisible();
  // …and Acme's are not, whatever is typed.
  await page.getByRole("combobox", { name: "Find anything" }).fill("acme-plant");
  await expect(page.getByRole("group", { name: "Nodes" })).toHaveCount(0);
  await expect(page.getByRole("option", { name: /acme-/ })).toHaveCount(0);
});
