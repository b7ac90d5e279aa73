/**
 * Bundles the agent CLI into one executable file, dist/edgefleet-agent.mjs (Node 20 is all a node
 * needs). Minified: V8 keeps every script's source in the heap (~1.6 MB unminified). The shebang
 * starts Node with the flags that keep an idle agent small (see README "Memory"): no optimizing
 * compiler (an agent mostly waits), a 1 MB young generation, no GC helper threads.
 */
import { chmod } from "node:fs/promises";
import { build } from "esbuild";

const AGENT_NODE_FLAGS = [
  "--lite-mode",
  // lite mode turns WebAssembly off anyway; saying so spares a warning on stderr at each start.
  "--no-expose-wasm",
  "--max-semi-space-size=1",
  "--single-threaded-gc",
  "--v8-pool-size=0",
];
const outfile = new URL("../dist/edgefleet-agent.mjs", import.meta.url).pathname;

await build({
  entryPoints: [new URL("../src/cli.ts", import.meta.url).pathname],
  bundle: true,
  minify: true,
  platform: "node",
  format: "esm",
  target: "node20",
  outfile,
  banner: {
    js: [
      `#!/usr/bin/env -S node ${AGENT_NODE_FLAGS.join(" ")}`,
      // Bundled CommonJS dependencies call require().
      'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);',
    ].join("\n"),
  },
  logLevel: "warning",
});
await chmod(outfile, 0o755);
process.stdout.write(`${outfile}\n`);
