import { expect, test } from "@playwright/test";
import { query } from "./console";
import { signInAs, visit } from "./keycloak";

type Slo = {
  window: string;
  indicators: Array<{
    key: string;
    value: number | null;
    objective: number;
    events: number | null;
    met: boolean | null;
  }>;
};

test("the service levels page shows the API latency alice's organization experienced, next to its objective", async ({
  page,
}) => {
  test.setTimeout(150_000);
  await signInAs(page, "alice");
  await visit(page, "/slo");
  const api = page.getByTestId("slo-apiP99");
  await expect(api).toContainText("API latency, p99");
  await expect(api).toContainText("≤ 1 s");
  for (const key of ["desiredToRunningP99", "connectToOnlineP99", "bytesPerNodePerMonth"])
    await expect(page.getByTestId(`slo-${key}`)).toBeVisible();

  // The web server pushes each organization's histogram every 15 s; a rate needs two pushes.
  await expect
    .poll(
      async () => {
        const slo = await query<Slo>(page, "metrics.slo", { window: "1h" });
        return slo.indicators.find((indicator) => indicator.key === "apiP99")?.events ?? 0;
      },
      { timeout: 120_000, intervals: [5_000] },
    )
    .toBeGreaterThan(0);
  await visit(page, "/slo");
  await expect(page.getByTestId("slo-value-apiP99")).toHaveText(/^\d[\d.,]* (ms|s)$/);
  await expect(page.getByTestId("slo-verdict-apiP99")).toHaveText(/^(met|missed)$/);

  // Another window is another query: the pressed button says which one is shown.
  await page.getByRole("button", { name: "24 h" }).click();
  await expect(page.getByRole("button", { name: "24 h" })).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("slo-apiP99")).toContainText("in 24h");
});

test("service levels: a window outside the list is a 400 naming the field, another tenant's a 404", async ({
  page,
  context,
}) => {
  await signInAs(page, "alice");
  const bad = await page.request.get(
    `/api/trpc/metrics.slo?input=${encodeURIComponent(JSON.stringify({ json: { window: "2h" } }))}`,
  );
  expect(bad.status()).toBe(400);
  expect(await bad.text()).toContain("window");

  const { hostname } = new URL(page.url());
  await context.addCookies([{ name: "edgefleet-org", value: "globex", domain: hostname, path: "/" }]);
  const foreign = await page.request.get(
    `/api/trpc/metrics.slo?input=${encodeURIComponent(JSON.stringify({ json: { window: "1h" } }))}`,
  );
  expect(foreign.status()).toBe(404);
  expect(await foreign.text()).toContain("NOT_FOUND");
});
