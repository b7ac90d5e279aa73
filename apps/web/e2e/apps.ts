import { expect, type Locator, type Page } from "@playwright/test";
import { visit } from "./keycloak";

// Apps and versions made through the console, as an operator does before a rollout.

/** Creates an app on /apps and waits for its page; its id. */
export async function createApp(page: Page, name: string): Promise<string> {
  await visit(page, "/apps");
  await page.getByRole("textbox", { name: "App name" }).fill(name);
  await page.getByRole("button", { name: "Create app" }).click();
  await expect(page.getByTestId("app-title")).toHaveText(name);
  return page.url().split("/").at(-1) as string;
}

/**
 * Adds a version with an uploaded artifact on the app's page; the version's row (its artifact
 * is still uploading: wait for its `artifact-state` to be ready).
 */
export async function addVersion(
  page: Page,
  version: { version: string; command: string; file: string; content: Buffer },
): Promise<Locator> {
  const form = page.getByRole("form", { name: "Add a version" });
  await form.getByRole("textbox", { name: "Version" }).fill(version.version);
  await form.getByRole("textbox", { name: "Command" }).fill(version.command);
  await form.getByLabel("Artifact file").setInputFiles({
    name: version.file,
    mimeType: "application/octet-stream",
    buffer: version.content,
  });
  await form.getByRole("button", { name: "Add version" }).click();
  return page.locator(`[data-testid="version-row"][data-version="${version.version}"]`);
}
