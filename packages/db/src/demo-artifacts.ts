import { createHash } from "node:crypto";

/**
 * The demo apps' artifacts: small programs a real agent can run (a single executable shell
 * script, installed as `./artifact`), built the same way every time so that the seed can declare
 * their SHA-256 and the demo loader (`apps/gateway/src/cli/demo.ts`) can upload the very bytes.
 * Padded to a size that shows a `pulling` progress in the console without costing the demo
 * anything (36 nodes × 96 KiB).
 */

/** Bytes of every demo artifact. */
export const DEMO_ARTIFACT_BYTES = 96 * 1024;

export interface DemoArtifact {
  bytes: Buffer;
  sha256: string;
}

export function demoArtifact(organization: string, app: string, version: string): DemoArtifact {
  const script = [
    "#!/bin/sh",
    `# ${app} ${version}: an Edgefleet demo app of organization "${organization}".`,
    "# It prints a heartbeat a minute until stopped; the agent runs it as ./artifact.",
    `trap 'echo "${app} ${version} stopping"; exit 0' TERM INT`,
    `echo "${app} ${version} started (pid $$)"`,
    `while :; do sleep 60 & wait $!; echo "${app} ${version}: ok"; done`,
    "",
  ].join("\n");
  // Comment lines fill the rest: deterministic, and never reached by the shell (the loop above).
  const line = `# ${"edgefleet demo artifact padding ".repeat(3).trim()}\n`;
  let text = script;
  while (Buffer.byteLength(text) + line.length <= DEMO_ARTIFACT_BYTES) text += line;
  text += "#".repeat(DEMO_ARTIFACT_BYTES - Buffer.byteLength(text) - 1);
  text += "\n";
  const bytes = Buffer.from(text, "utf8");
  return { bytes, sha256: createHash("sha256").update(bytes).digest("hex") };
}
