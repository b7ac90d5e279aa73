import { readFile } from "node:fs/promises";
import { expect, type Page, test } from "@playwright/test";
import { confirm } from "./console";
import { signInAs, visit } from "./keycloak";

const NATS_LEAF_URL = process.env.NATS_LEAF_URL;

async function download(page: Page, linkName: string): Promise<{ name: string; text: string }> {
  const [file] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("link", { name: linkName }).click(),
  ]);
  const path = await file.path();
  return { name: file.suggestedFilename(), text: await readFile(path, "utf8") };
}

test("an admin creates a site and downloads its leaf bundle: config for the hub and fresh credentials", async ({
  page,
}) => {
  if (!NATS_LEAF_URL) throw new Error("NATS_LEAF_URL is not set: export the stack's stack.env");
  await signInAs(page, "alice");
  await visit(page, "/sites");
  const name = `e2e-site-${Date.now()}`;
  await page.getByLabel("Site name").fill(name);
  await page.getByLabel("Site description").fill("made by the sites e2e test");
  await page.getByRole("button", { name: "Create site" }).click();

  // The new site's page: identity and counts (no nodes yet).
  await expect(page.getByTestId("site-title")).toHaveText(name);
  await expect(page.getByTestId("count-online")).toHaveText("0");
  await expect(page.getByRole("link", { name: `Show the 0 nodes of ${name}` })).toHaveAttribute(
    "href",
    `/nodes?selector=${encodeURIComponent(`site=${name}`)}`,
  );

  await page.getByLabel("Listen address").fill("0.0.0.0:4333");
  await page.getByRole("button", { name: "Generate leaf bundle" }).click();
  await expect(page.getByTestId("leaf-bundle")).toContainText("nats-server -c /etc/edgefleet/leaf.conf");

  const config = await download(page, "Download leaf.conf");
  expect(config.name).toBe("leaf.conf");
  expect(config.text).toContain(`server_name: "acme-${name}"`);
  expect(config.text).toContain('listen: "0.0.0.0:4333"');
  // The hub's leafnode URL comes from the deployment's environment, not from the browser.
  expect(config.text).toContain(`urls: ${JSON.stringify([NATS_LEAF_URL])}`);
  expect(config.text).toContain('credentials: "/etc/edgefleet/site.creds"');
  expect(config.text).toMatch(/resolver_preload: \{\n {2}A[A-Z0-9]{55}: ey/);

  const creds = await download(page, "Download site.creds");
  expect(creds.name).toBe("site.creds");
  expect(creds.text).toMatch(/-----BEGIN NATS USER JWT-----\ney[\w-]+\.[\w-]+\.[\w-]+\n/);
  expect(creds.text).toMatch(/-----BEGIN USER NKEY SEED-----\nSU[A-Z0-9]{56}\n/);

  // Enrolling from the site's page preselects it for the new token.
  const sitePage = page.url();
  const siteId = new URL(sitePage).pathname.split("/").at(-1) ?? "";
  await page.getByRole("link", { name: "Enroll nodes here" }).click();
  await expect(page.getByLabel("Token site")).toHaveValue(siteId);
  await expect(page.getByLabel("Token site").locator("option:checked")).toHaveText(name);
  await visit(page, sitePage);

  // An empty site can be deleted; the list no longer shows it.
  await page.getByRole("button", { name: "Delete site" }).click();
  await confirm(page, "Yes, delete");
  await expect(page).toHaveURL(/\/sites$/);
  await expect(page.getByTestId("site-row").first()).toBeVisible();
  await expect(page.locator(`[data-testid="site-row"][data-name="${name}"]`)).toHaveCount(0);
});

test("a site with nodes is not deleted: the server's refusal is shown and the site stays", async ({
  page,
}) => {
  await signInAs(page, "alice");
  await visit(page, "/sites");
  const row = page.locator('[data-testid="site-row"][data-name="plant-9"]');
  await row.getByRole("link", { name: "plant-9" }).click();
  await expect(page.getByTestId("site-title")).toHaveText("plant-9");
  await page.getByRole("button", { name: "Delete site" }).click();
  await confirm(page, "Yes, delete");
  const refusal = page.getByRole("main").getByRole("alert");
  await expect(refusal).toContainText("still has");
  await expect(refusal).toContainText("move or delete them first");
  await visit(page, "/sites");
  await expect(page.locator('[data-testid="site-row"][data-name="plant-9"]')).toHaveCount(1);
});

// Phone widths of these pages: phone.spec.ts covers every page.

test("a site name already in use is refused on the name field", async ({ page }) => {
  await signInAs(page, "alice");
  await visit(page, "/sites");
  const name = page.getByLabel("Site name");
  // The API's site-name rule, judged as it is typed.
  await name.fill("bad name!");
  await name.blur();
  await expect(name).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByRole("main").getByRole("alert")).toContainText("site names");
  // A valid name that only the server can refuse (CONFLICT), shown on the same field.
  await name.fill("plant-9");
  await expect(name).toHaveAttribute("aria-invalid", "false");
  await page.getByRole("button", { name: "Create site" }).click();
  await expect(page.getByRole("main").getByRole("alert")).toHaveText('a site named "plant-9" already exists');
  await expect(name).toBeFocused();
  await expect(page).toHaveURL(/\/sites$/);
});
