import { expect, test } from "@playwright/test";
import { signInAs, visit } from "./keycloak";

// The REST API through the real server: a key made by a signed-in owner (over the console's
// tRPC endpoint), then plain HTTP with that key; the OpenAPI document and the docs page.

test("an API key created by alice works over REST in Acme only, and stops working once revoked", async ({
  page,
  request,
}) => {
  await signInAs(page, "alice");
  const name = `e2e-${Date.now()}`;
  // The console's tRPC endpoint (superjson envelope), with alice's session cookie.
  const created = await page.request.post("/api/trpc/apiKey.create", {
    data: { json: { name, role: "viewer" } },
  });
  expect(created.status()).toBe(200);
  const key = (await created.json()).result.data.json as { id: string; key: string };
  expect(key.key).toMatch(/^efk_/);

  const auth = { authorization: `Bearer ${key.key}` };
  const members = await request.get("/api/v1/members", { headers: auth });
  expect(members.status()).toBe(200);
  const emails = ((await members.json()).items as Array<{ email: string }>).map((m) => m.email);
  expect(emails).toContain("alice@acme.example");
  expect(emails).not.toContain("bob@globex.example");

  // A viewer key cannot create tokens: one error model.
  const forbidden = await request.post("/api/v1/enrollment-tokens", { headers: auth, data: {} });
  expect(forbidden.status()).toBe(403);
  expect(await forbidden.json()).toMatchObject({ code: "FORBIDDEN", message: expect.any(String) });

  const revoked = await page.request.post("/api/trpc/apiKey.revoke", { data: { json: { id: key.id } } });
  expect(revoked.status()).toBe(200);
  const after = await request.get("/api/v1/members", { headers: auth });
  expect(after.status()).toBe(401);
  expect(await after.json()).toMatchObject({ code: "UNAUTHORIZED" });
});

test("the REST API refuses requests without a key", async ({ request }) => {
  const response = await request.get("/api/v1/nodes/counts");
  expect(response.status()).toBe(401);
  expect(await response.json()).toMatchObject({ code: "UNAUTHORIZED" });
});

test("the OpenAPI 3.1 document is served and the docs page renders it", async ({ page, request }) => {
  const document = await (await request.get("/api/openapi.json")).json();
  expect(document.openapi).toBe("3.1.0");
  expect(Object.keys(document.paths)).toEqual(
    expect.arrayContaining(["/nodes/search", "/audit", "/api-keys"]),
  );

  await visit(page, "/api-docs");
  await expect(page.getByRole("heading", { name: "Edgefleet API" })).toBeVisible();
  // One sidebar group per tag of the document.
  for (const tag of ["Nodes", "Members", "API keys", "Audit log", "Enrollment"]) {
    await expect(page.getByRole("link", { name: tag, exact: true })).toBeVisible();
  }
});
