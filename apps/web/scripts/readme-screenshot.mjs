// Takes the README's screenshot (docs/images/fleet.png): the fleet page of the demo organization,
// signed in as alice, with the same Chromium the browser tests use. Needs the dev stack with its
// demo fleet (`./edgefleet up`), then from apps/web:
//   set -a; source ../../var/dev/stack.env; set +a; node scripts/readme-screenshot.mjs
import { chromium } from "@playwright/test";

const base = process.env.WEB_URL;
if (!base) throw new Error("WEB_URL is not set: export var/dev/stack.env first");
const output = new URL("../../../docs/images/fleet.png", import.meta.url);

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, colorScheme: "light" });
  await page.goto(new URL("/fleet", base).toString());
  await page.locator("#username").fill("alice");
  if (!(await page.locator("#password").isVisible())) await page.locator("#kc-login").click();
  await page.locator("#password").fill("edgefleet");
  await page.locator("#kc-login").click();
  await page.waitForURL(/\/fleet$/);
  await page.getByTestId("recent-events").waitFor();
  await page.getByTestId("top-bandwidth").waitFor();
  // Let the live indicator settle and the charts finish their first layout.
  await page.getByTestId("live-state").and(page.locator('[data-state="live"]')).waitFor();
  await page.waitForTimeout(1000);
  await page.screenshot({ path: output.pathname });
  console.log(`wrote ${output.pathname}`);
} finally {
  await browser.close();
}
