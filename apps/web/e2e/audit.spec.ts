import { expect, test } from "@playwright/test";
import { signInAs, visit } from "./keycloak";

test("the audit log shows a key's creation and revocation, filters by action in the URL, and exports them", async ({
  page,
}) => {
  await signInAs(page, "alice");
  const name = `e2e-audited-${Date.now()}`;
  const created = await page.request.post("/api/trpc/apiKey.create", {
    data: { json: { name, role: "viewer" } },
  });
  expect(created.status()).toBe(200);
  const key = (await created.json()).result.data.json as { id: string };
  const revoked = await page.request.post("/api/trpc/apiKey.revoke", { data: { json: { id: key.id } } });
  expect(revoked.status()).toBe(200);

  await visit(page, "/audit");
  const rows = page.getByTestId("audit-row");
  const ours = rows.filter({ hasText: name });
  await expect(ours).toHaveCount(2);
  await expect(ours.first()).toContainText("alice@acme.example");

  // Filter: only revocations by alice; the filters land in the URL and survive a reload.
  await page.getByLabel("Action").fill("apiKey.revoke");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page).toHaveURL(/[?&]action=apiKey\.revoke/);
  await expect(ours).toHaveCount(1);
  await page.reload();
  await expect(page.getByLabel("Action")).toHaveValue("apiKey.revoke");
  await expect(ours).toHaveCount(1);
  for (const action of await rows.evaluateAll((els) => els.map((el) => el.getAttribute("data-action")))) {
    expect(action).toBe("apiKey.revoke");
  }

  // The before/after diff of the revocation names the field that changed.
  await ours.getByText("before / after").click();
  await expect(ours.getByTestId("audit-diff-row").filter({ hasText: "revokedAt" })).toHaveCount(1);

  // A time range that ends before the key existed shows nothing of it.
  await page.getByLabel("Latest time").fill("2020-01-01T00:00");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page).toHaveURL(/[?&]to=20(19-12-31|20-01-01)T/);
  await expect(page.getByText("No entries match these filters.")).toBeVisible();
  await page.getByRole("button", { name: "Clear" }).click();
  await expect(page).toHaveURL(/\/audit$/);

  // The export link carries the filters: CSV of alice's apiKey.* entries contains both rows of this key.
  await page.getByLabel("Action").fill("apiKey.");
  await page.getByRole("button", { name: "Apply filters" }).click();
  const href = await page.getByTestId("export-csv").getAttribute("href");
  expect(href).toContain("action=apiKey.");
  const csv = await page.request.get(href ?? "");
  expect(csv.status()).toBe(200);
  expect(csv.headers()["content-type"]).toContain("text/csv");
  const lines = (await csv.text()).split("\r\n").filter((line) => line.includes(key.id));
  expect(lines.map((line) => line.split(",")[4]).sort()).toEqual(["apiKey.create", "apiKey.revoke"]);
});

test("the audit export refuses a request without a session or key", async ({ request }) => {
  const response = await request.get("/audit/export?format=csv");
  expect(response.status()).toBe(401);
});

// Phone widths of these pages: phone.spec.ts covers every page.
