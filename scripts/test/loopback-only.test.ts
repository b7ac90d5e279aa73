import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// Every server of a running stack listens on loopback only, as the README promises (issue 8, #8:
// Keycloak's cluster transport listened on *:57800 and <host>:7800). Runs against the stack the
// test command started (EDGEFLEET_PROFILE, `test` under ./edgefleet test).

const repoRoot = join(import.meta.dirname, "../..");
const profile = process.env.EDGEFLEET_PROFILE ?? "test";
const varDir = join(repoRoot, "var", profile);

function stat(pid: string): { session: string } | null {
  try {
    // Field 2 (comm) may contain spaces: split after its closing parenthesis.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return { session: fields[3] ?? "" };
  } catch {
    return null;
  }
}

/** Pids of the stack: each service runs in its own session named by its pid file; Postgres by its data dir. */
function stackPids(): Set<string> {
  const sessions = new Set(
    readdirSync(join(varDir, "pids"))
      .filter((file) => file.endsWith(".pid"))
      .map((file) => readFileSync(join(varDir, "pids", file), "utf8").trim()),
  );
  const pids = new Set<string>();
  for (const pid of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    const info = stat(pid);
    let cmdline = "";
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      continue;
    }
    if ((info && sessions.has(info.session)) || cmdline.includes(`var/${profile}/`)) pids.add(pid);
  }
  return pids;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|\[::1\]|\[::ffff:127\.\d+\.\d+\.\d+\]):\d+$/;

describe("the stack listens on loopback only", () => {
  it("has no listening socket of a stack process beyond 127.0.0.1 / ::1", () => {
    expect(existsSync(join(varDir, "pids")), `no running ${profile} stack (start it first)`).toBe(true);
    const pids = stackPids();
    const sockets = spawnSync("ss", ["-Hltnup"], { encoding: "utf8" }).stdout.split("\n");
    const ours = sockets.filter((line) =>
      [...line.matchAll(/pid=(\d+)/g)].some((match) => pids.has(match[1] ?? "")),
    );
    // Postgres, nats-server, Mimir and Keycloak at least.
    expect(ours.length, sockets.join("\n")).toBeGreaterThanOrEqual(4);
    const exposed = ours.filter((line) => {
      const local = line.trim().split(/\s+/)[4] ?? "";
      return !LOOPBACK.test(local);
    });
    expect(exposed).toEqual([]);
  });
});
