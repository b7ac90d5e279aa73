import { expect, type Locator, type Page } from "@playwright/test";

/** A toast (sonner) whose text is exactly `text`. */
export function toast(page: Page, text: string | RegExp): Locator {
  const exact =
    typeof text === "string" ? new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`) : text;
  return page.locator("[data-sonner-toast]").filter({ hasText: exact });
}

/**
 * Opens the dropdown menu behind the button named `trigger` and returns its item `item`. A click
 * that lands before the page has hydrated opens nothing, so the trigger is pressed until the
 * menu shows (Escape first, in case a slow menu opened between tries).
 */
export async function menuItem(
  page: Page,
  trigger: string | RegExp,
  item: string,
  role: "menuitem" | "menuitemradio" = "menuitem",
): Promise<Locator> {
  const entry = page.getByRole(role, { name: item });
  await expect(async () => {
    if (await entry.isVisible()) return;
    await page.keyboard.press("Escape");
    await page.getByRole("button", { name: trigger }).click();
    await expect(entry).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout: 20_000 });
  return entry;
}

/** Answers the open confirmation dialog (ConfirmAction) with its confirming button. */
export async function confirm(page: Page, button: string): Promise<void> {
  const dialog = page.getByRole("alertdialog");
  await expect(dialog).toBeVisible();
  await dialog.getByRole("button", { name: button }).click();
  await expect(dialog).toHaveCount(0);
}

/** Calls a tRPC mutation as the signed-in user (same origin, session cookie). */
export async function mutate<T>(page: Page, path: string, input: unknown): Promise<T> {
  const response = await page.request.post(`/api/trpc/${path}`, { data: { json: input } });
  expect(response.ok(), await response.text()).toBe(true);
  return ((await response.json()) as { result: { data: { json: T } } }).result.data.json;
}

/**
 * A rollout whose page the page tests can visit, when none exists yet (the seed starts none):
 * the app's first version to one seeded node, aborted at once so that it blocks no other rollout.
 */
async function pageRollout(page: Page, appId: string): Promise<{ id: string }> {
  const versions = await query<{ items: Array<{ id: string; artifact: { state: string } }> }>(
    page,
    "appVersion.list",
    { appId },
  );
  const version = versions.items.find((v) => v.artifact.state === "ready");
  if (!version) throw new Error(`the seeded app has no ready version: ${JSON.stringify(versions.items)}`);
  const rollout = await mutate<{ id: string }>(page, "rollout.create", {
    appVersionId: version.id,
    target: { selector: "site=plant-9" },
    strategy: { batches: [{ count: 1, pauseAfter: "approval" }] },
  });
  await mutate(page, "rollout.abort", { id: rollout.id });
  return rollout;
}

/** Calls a tRPC query as the signed-in user (same origin, session cookie). */
export async function query<T>(page: Page, path: string, input: unknown): Promise<T> {
  const response = await page.request.get(
    `/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`,
  );
  expect(response.ok(), await response.text()).toBe(true);
  return ((await response.json()) as { result: { data: { json: T } } }).result.data.json;
}

/**
 * Every page of the console with what shows it has rendered; node, site, app and rollout pages are
 * those of a seeded node, site, app and rollout of Acme (found through the palette's search procedure).
 */
export async function consolePages(
  page: Page,
): Promise<Array<{ name: string; path: string; ready: Locator }>> {
  const { hits } = await query<{ hits: Array<{ kind: string; id: string; name: string }> }>(
    page,
    "search.byName",
    { query: "plant-9" },
  );
  const node = hits.find((hit) => hit.kind === "node" && hit.name === "acme-plant-9-01");
  const site = hits.find((hit) => hit.kind === "site" && hit.name === "plant-9");
  if (!node || !site) throw new Error(`seeded node or site missing: ${JSON.stringify(hits)}`);
  const seeded = await query<{ hits: Array<{ kind: string; id: string; name: string }> }>(
    page,
    "search.byName",
    { query: "telemetry-collector" },
  );
  const app = seeded.hits.find((hit) => hit.kind === "app");
  if (!app) throw new Error(`seeded app missing: ${JSON.stringify(seeded.hits)}`);
  const rollout = seeded.hits.find((hit) => hit.kind === "rollout") ?? (await pageRollout(page, app.id));
  return [
    { name: "fleet", path: "/fleet", ready: page.getByTestId("recent-events") },
    { name: "nodes", path: "/nodes", ready: page.getByTestId("node-name").first() },
    { name: "node detail", path: `/nodes/${node.id}`, ready: page.getByTestId("availability-strip") },
    { name: "sites", path: "/sites", ready: page.getByTestId("site-row").first() },
    { name: "site detail", path: `/sites/${site.id}`, ready: page.getByTestId("site-title") },
    { name: "apps", path: "/apps", ready: page.getByTestId("app-row").first() },
    { name: "app detail", path: `/apps/${app.id}`, ready: page.getByTestId("version-row").first() },
    { name: "rollouts", path: "/rollouts", ready: page.getByTestId("rollout-row").first() },
    { name: "rollout detail", path: `/rollouts/${rollout.id}`, ready: page.getByTestId("rollout-status") },
    {
      name: "new rollout",
      path: `/rollouts/new?appId=${app.id}`,
      ready: page.getByTestId("batch-editor").first(),
    },
    {
      name: "alerts",
      path: "/alerts",
      ready: page.getByRole("heading", { name: "Firing now", exact: true }),
    },
    {
      name: "enrollment",
      path: "/enrollment",
      ready: page.getByRole("heading", { name: "Tokens", exact: true }),
    },
    { name: "members", path: "/members", ready: page.getByTestId("member-row").first() },
    { name: "API keys", path: "/api-keys", ready: page.getByRole("heading", { name: "Keys", exact: true }) },
    {
      name: "audit log",
      path: "/audit",
      // A fresh stack may have no audited change yet: the empty state is a rendered page too.
      ready: page.getByTestId("audit-row").or(page.getByText("No entries match these filters.")).first(),
    },
    {
      name: "notifications",
      path: "/settings/notifications",
      ready: page.getByRole("heading", { name: "What reaches me", exact: true }),
    },
    // Where a notification's tap lands without buttons (no token here: the page says so).
    {
      name: "alert action",
      path: "/alerts/action",
      ready: page.getByRole("heading", { name: "Act on an alert", exact: true }),
    },
    { name: "service levels", path: "/slo", ready: page.getByTestId("slo-apiP99") },
    // Signing in happens on Keycloak's own page; a failed sign-in lands on ours.
    {
      name: "sign-in problem",
      path: "/sign-in/problem?error=AccessDenied",
      ready: page.getByTestId("sign-in-problem"),
    },
  ];
}
