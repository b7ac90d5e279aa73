import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

// The start command's failure paths: it must say which prerequisite or port is wrong and
// what to do, and leave no process behind. Runs against the real scripts with the `check`
// profile (ports +1000) so it never touches a dev or test stack.

const repoRoot = join(import.meta.dirname, "../..");
const checkPorts = { postgres: 16432, nats: 5222 };

function runScript(script: string, env: Record<string, string>) {
  return spawnSync("bash", [join(repoRoot, "scripts/stack", script)], {
    cwd: repoRoot,
    env: { ...process.env, EDGEFLEET_PROFILE: "check", EDGEFLEET_SKIP_INSTALL: "1", ...env },
    encoding: "utf8",
    timeout: 120_000,
  });
}

/** Processes whose command line or working data lives under var/check. */
function processesOfCheckProfile(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      if (cmdline.includes("var/check/")) found.push(`${pid}: ${cmdline}`);
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

const portIsOpen = (port: number) =>
  spawnSync("bash", ["-c", `exec 3<>/dev/tcp/127.0.0.1/${port}`], { stdio: "ignore" }).status === 0;

let blocker: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (blocker ? blocker.close(() => resolve()) : resolve()));
  blocker = undefined;
  runScript("down.sh", {});
});

describe("./edgefleet up failure paths", () => {
  it("names a taken port, says what to do, and stops what it had started", async () => {
    blocker = createServer();
    const server = blocker;
    await new Promise<void>((resolve) => server.listen(checkPorts.nats, "127.0.0.1", resolve));

    const result = runScript("up.sh", {});

    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`port ${checkPorts.nats} (for nats client port) is already in use`);
    expect(result.stderr).toContain("./edgefleet down");
    // PostgreSQL had started before NATS failed: it must be gone again.
    expect(result.stdout).toContain("postgres on :16432");
    expect(portIsOpen(checkPorts.postgres)).toBe(false);
    expect(processesOfCheckProfile()).toEqual([]);
  });

  it("refuses a missing prerequisite with what to install", () => {
    const result = spawnSync("bash", [join(repoRoot, "scripts/stack/install.sh")], {
      cwd: repoRoot,
      env: { ...process.env, KEYCLOAK_JAVA_HOME: "/nonexistent/jdk" },
      encoding: "utf8",
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("Java 21+ not found at /nonexistent/jdk");
    expect(result.stderr).toContain("KEYCLOAK_JAVA_HOME");
  });

  it("refuses an unknown profile", () => {
    const result = runScript("up.sh", { EDGEFLEET_PROFILE: "staging" });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("unknown profile 'staging'");
  });
});
