import { defineConfig } from "@playwright/test";

// The test command starts the stack and the web server; Playwright only drives the browser.
const baseURL = process.env.WEB_URL;
if (!baseURL) {
  throw new Error(
    "WEB_URL is not set: export var/test/stack.env (./edgefleet test does this) before running e2e",
  );
}

export default defineConfig({
  testDir: "./e2e",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: [["list"]],
  use: {
    baseURL,
    headless: true,
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    },
  },
});
