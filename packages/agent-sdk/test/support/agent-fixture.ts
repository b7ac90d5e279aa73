import { join } from "node:path";
import { Agent, type AgentOptions } from "../../src/agent/agent.js";
import { DiskOutbox } from "../../src/agent/disk-outbox.js";
import { FileStateStore } from "../../src/agent/state-store.js";
import { LinuxHostSampler } from "../../src/metrics/host.js";
import { ProcessRuntime } from "../../src/runtime/process.js";
import { testCredentials } from "./credentials.js";

/**
 * A reference agent (process runtime, disk outbox, file state) on a state dir, as the CLI builds
 * it, with the test credentials of node `wid` (subject layout 2, the tests' site).
 */
export async function startTestAgent(
  stateDir: string,
  servers: string[],
  wid: string,
  overrides: Partial<AgentOptions> = {},
): Promise<{ agent: Agent; runtime: ProcessRuntime }> {
  const runtime = new ProcessRuntime({
    appsDir: join(stateDir, "apps"),
    restartBackoff: { minMs: 200, maxMs: 2_000 },
  });
  const agent = await Agent.start({
    servers,
    // The test server has no auth: any JWT is accepted, the point is the subjects it names.
    credentials: testCredentials(wid),
    runtime,
    outbox: await DiskOutbox.open({ dir: join(stateDir, "outbox"), maxBytes: 1 << 20, sync: false }),
    stateStore: new FileStateStore(join(stateDir, "state.json")),
    hostSampler: new LinuxHostSampler(stateDir),
    heartbeatSeconds: 1,
    metricsSeconds: 1,
    reconnect: { baseMs: 100, maxMs: 1_000 },
    requestTimeoutMs: 2_000,
    ...overrides,
  });
  return { agent, runtime };
}
