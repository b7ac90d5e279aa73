import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import { confirm, toast } from "./console";
import { signInAs, visit } from "./keycloak";

// The operator's whole path with a real agent: a token made in the console, the install command
// it shows run on "the node" (this machine, paths moved into a scratch dir, no sudo: it downloads
// the native agent and its systemd unit from the console), approval in the console, the node
// online with metrics in its chart, then its credentials revoked.

let agent: ChildProcess | undefined;
let workDir: string | undefined;

test.afterEach(async () => {
  const running = agent;
  if (running?.pid && running.exitCode === null && running.signalCode === null) {
    const exited = new Promise((resolve) => running.once("exit", resolve));
    // Its own process group: the shell and the agent (exec replaces the shell) go together.
    process.kill(-running.pid, "SIGTERM");
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (running.exitCode === null && running.signalCode === null) process.kill(-running.pid, "SIGKILL");
  }
  agent = undefined;
  if (workDir) rmSync(workDir, { recursive: true, force: true });
  workDir = undefined;
});

/**
 * The install command as shown, made runnable here: scratch paths, no sudo, and instead of
 * systemd, the downloaded unit's own ExecStart line (with the same paths moved) run in the
 * foreground. What the agent is, where it comes from and how it is started are the command's.
 */
function localized(command: string, dir: string): string {
  mkdirSync(join(dir, "bin"));
  mkdirSync(join(dir, "systemd"));
  const moved = (text: string) =>
    text
      .replaceAll("sudo ", "")
      .replaceAll("/usr/local/bin", join(dir, "bin"))
      .replaceAll("/etc/systemd/system", join(dir, "systemd"))
      .replaceAll("/etc/edgefleet", join(dir, "etc"))
      .replaceAll("/var/lib/edgefleet-agent", join(dir, "state"));
  const unit = join(dir, "systemd/edgefleet-agent.service");
  const startService = "systemctl daemon-reload && systemctl enable --now edgefleet-agent";
  const localizedCommand = moved(command);
  expect(localizedCommand).toContain(startService);
  return localizedCommand.replace(
    startService,
    `exec $(sed -n 's/^ExecStart=//p' ${unit} | sed 's#/usr/local/bin#${join(dir, "bin")}#;s#/etc/edgefleet#${join(dir, "etc")}#')`,
  );
}

test("enroll a real agent with a token created in the console and watch it come online with a chart", async ({
  page,
}) => {
  test.setTimeout(300_000);
  const run = `e2e-${Date.now()}`;
  await signInAs(page, "alice");

  // A site of its own, so the counts other tests look at do not move.
  const created = await page.request.post("/api/trpc/site.create", {
    data: { json: { name: `site-${run}`, description: "enrollment e2e" } },
  });
  expect(created.status(), await created.text()).toBe(200);

  await visit(page, "/enrollment");
  await page.getByLabel("Token description").fill(`token ${run}`);
  await page.getByLabel("Token site").selectOption({ label: `site-${run}` });
  await page.getByLabel("Token expires after").selectOption({ label: "1 hour" });
  await page.getByLabel("Max uses").fill("1");
  await page.getByLabel("Token labels").fill(`e2e=${run}`);
  await page.getByLabel("Approve each node").check();
  await page.getByRole("button", { name: "Create token" }).click();

  const token = (await page.getByTestId("secret").textContent())?.trim() ?? "";
  expect(token).toMatch(/^efe_[A-Za-z0-9_-]{43}$/);
  const command = (await page.getByTestId("install-command").textContent()) ?? "";
  expect(command).toContain(token);
  expect(command).toContain("/downloads/agent/edgefleet-agent-linux-");
  const tokenRow = page.getByTestId("token-row").filter({ hasText: `token ${run}` });
  await expect(tokenRow.getByTestId("token-uses")).toHaveText("0 / 1");
  await expect(tokenRow).toContainText(`site-${run}`);

  // "The node": run the command as shown (it writes the config and the enrollment credentials).
  workDir = mkdtempSync(join(tmpdir(), "ef-e2e-agent-"));
  const log = openSync(join(workDir, "agent.log"), "a");
  agent = spawn("bash", ["-c", localized(command, workDir)], {
    detached: true,
    stdio: ["ignore", log, log],
    // A node has none of the control plane's variables.
    env: { PATH: process.env.PATH ?? "", NODE_ENV: "production" },
  });
  const agentLog = () => readFileSync(join(workDir ?? "", "agent.log"), "utf8");

  // It enrolls and waits for approval: the console lists it with the token's labels.
  const pendingRow = page.getByTestId("pending-node").filter({ hasText: `e2e=${run}` });
  await expect(pendingRow, agentLog()).toBeVisible({ timeout: 60_000 });
  await expect(pendingRow).toContainText(`site-${run}`);
  await expect(tokenRow.getByTestId("token-uses")).toHaveText("1 / 1");
  const nodeHref = (await pendingRow.getByRole("link").getAttribute("href")) ?? "";
  await pendingRow.getByRole("button", { name: "Approve" }).click();
  await expect(toast(page, /approved/)).toBeVisible();

  // Approved: it picks up its credentials on its next try, connects, and reports.
  await visit(page, nodeHref);
  await expect(page.getByTestId("node-title")).toBeVisible();
  const identity = page.locator("dl").first();
  await expect(identity).toContainText(`site-${run}`);
  await expect(async () => {
    await page.reload();
    await expect(identity.getByText("online", { exact: true })).toBeVisible({ timeout: 5_000 });
  }, agentLog()).toPass({ timeout: 90_000, intervals: [5_000] });

  // Its first metrics report (within a report interval) reaches Mimir through the gateway.
  await page.getByRole("button", { name: "15m" }).click();
  const memory = page.getByTestId("chart-memory");
  await expect(async () => {
    await page.getByRole("button", { name: "1h" }).click();
    await page.getByRole("button", { name: "15m" }).click();
    await expect(memory.locator(".recharts-line-curve").first()).toBeVisible({ timeout: 5_000 });
  }, agentLog()).toPass({ timeout: 150_000, intervals: [5_000] });
  expect(Number(await memory.getAttribute("data-points"))).toBeGreaterThan(0);

  // Revoked from its page: the gateway cuts it off and it can never come back with this key.
  await page.getByRole("button", { name: "Revoke credentials" }).click();
  await confirm(page, "Yes, revoke");
  await expect(page.getByText("Credentials revoked: this node can no longer connect.")).toBeVisible();
  await expect(identity.getByText("revoked", { exact: true })).toBeVisible();
});

test("a bad label is refused with a clear message next to the field and no token is made", async ({
  page,
}) => {
  await signInAs(page, "alice");
  await visit(page, "/enrollment");
  await page.getByLabel("Token description").fill(`bad-labels-${Date.now()}`);
  const labels = page.getByLabel("Token labels");
  await labels.fill("no-equals-sign");
  await page.getByRole("button", { name: "Create token" }).click();
  // Judged in the browser by the API's own schema, before anything is sent; focus goes to the field.
  await expect(page.getByRole("main").getByRole("alert")).toHaveText('"no-equals-sign" is not key=value');
  await expect(labels).toHaveAttribute("aria-invalid", "true");
  await expect(labels).toHaveAccessibleDescription('"no-equals-sign" is not key=value');
  // The same rule the server applies (label keys), shown as soon as the field is corrected.
  await labels.fill("bad key=x");
  await expect(page.getByRole("main").getByRole("alert")).toContainText("label keys");
  await page.getByRole("button", { name: "Create token" }).click();
  await expect(page.getByRole("main").getByRole("alert")).toContainText("label keys");
  await expect(page.getByTestId("secret")).toHaveCount(0);
  // Fixed, the message goes away as it is typed.
  await labels.fill("good=x");
  await expect(page.getByRole("main").getByRole("alert")).toHaveCount(0);
});

test("a server refusal that the client cannot foresee lands on its field", async ({ page }) => {
  await signInAs(page, "alice");
  // A site id of the right shape that is not this organization's: only the server can tell.
  await visit(page, `/enrollment?site=${"0".repeat(8)}-0000-4000-8000-${"0".repeat(12)}`);
  await page.getByLabel("Token description").fill(`foreign-site-${Date.now()}`);
  await page.getByRole("button", { name: "Create token" }).click();
  await expect(page.getByRole("main").getByRole("alert")).toHaveText(/^site [0-9a-f-]{36} not found$/);
  await expect(page.getByLabel("Token site")).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByLabel("Token site")).toBeFocused();
  await expect(page.getByTestId("secret")).toHaveCount(0);
});

test("a token is revoked from the list and shows as revoked", async ({ page }) => {
  await signInAs(page, "alice");
  await visit(page, "/enrollment");
  const description = `to-revoke-${Date.now()}`;
  await page.getByLabel("Token description").fill(description);
  await page.getByRole("button", { name: "Create token" }).click();
  await expect(page.getByTestId("secret")).toBeVisible();
  await page.getByRole("button", { name: "I have stored it" }).click();
  await expect(page.getByTestId("secret")).toHaveCount(0);
  const row = page.getByTestId("token-row").filter({ hasText: description });
  await expect(row.getByTestId("token-state")).toHaveText("usable");
  await row.getByRole("button", { name: "Revoke" }).click();
  await confirm(page, "Yes, revoke");
  await expect(row.getByTestId("token-state")).toHaveText("revoked");
  await expect(row.getByRole("button", { name: "Revoke" })).toHaveCount(0);
});
