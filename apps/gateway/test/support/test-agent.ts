import { spawnSync } from "node:child_process";
import { join } from "node:path";

/**
 * The agent binary an end-to-end test runs: both agents pass the same e2e tests (issue 14). The
 * vitest project sets EDGEFLEET_E2E_AGENT (vitest.config.ts): `node` is the reference agent (the
 * TypeScript CLI), `go` the native agent, built through its cached build script (a no-op when its
 * sources did not change).
 */
export interface TestAgent {
  kind: "node" | "go";
  /** Program and leading arguments; append `run --config <file>`. */
  command: string;
  args: string[];
}

const repoRoot = join(import.meta.dirname, "../../../..");

export function testAgent(): TestAgent {
  const kind = process.env.EDGEFLEET_E2E_AGENT ?? "node";
  if (kind === "node") {
    return {
      kind,
      command: process.execPath,
      args: [join(repoRoot, "packages/agent-sdk/bin/edgefleet-agent.mjs")],
    };
  }
  if (kind !== "go") throw new Error(`EDGEFLEET_E2E_AGENT=${kind}: want node or go`);
  const built = spawnSync(join(repoRoot, "apps/agent/build.sh"), { encoding: "utf8" });
  if (built.status !== 0) throw new Error(`building the native agent failed:\n${built.stderr}`);
  const binary = built.stdout.trim().split("\n").at(-1) ?? "";
  return { kind, command: binary, args: [] };
}
