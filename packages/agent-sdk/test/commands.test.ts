import { describe, expect, it } from "vitest";
import { answerCommand, encodeCommandReply, RecentLog } from "../src/agent/commands.js";
import {
  COMMAND_REPLY_LIMIT,
  decodeMessage,
  downlinkMessageType,
  encodeMessage,
} from "../src/protocol/index.js";
import { HollowRuntime } from "../src/runtime/hollow.js";
import type { Runtime } from "../src/runtime/runtime.js";

const noDiagnostics = {
  diagnostics: () => Promise.reject(new Error("not asked")),
  forceReport: () => Promise.resolve({ st: 4, mx: 9 }),
};

async function runningHollow(): Promise<HollowRuntime> {
  const runtime = new HollowRuntime({ stepMs: [1, 2] });
  runtime.put("vision", "1.0", { command: ["./vision"] });
  await expect.poll(() => runtime.instances()[0]?.st).toBe("running");
  return runtime;
}

describe("answering commands (reference agent)", () => {
  it.each([
    ["restart", { ok: true, inst: { app: "vision", st: "running", rs: 1 } }],
    ["stop", { ok: true, inst: { st: "stopped", why: "stopped by an operator" } }],
    ["health", { ok: true, hl: { ok: true } }],
  ] as const)("%s on a hollow app", async (cmd, expected) => {
    const runtime = await runningHollow();
    const reply = await answerCommand({ v: 1, id: "a1", cmd, app: "vision" }, { runtime, ...noDiagnostics });
    expect(reply).toMatchObject({ v: 1, id: "a1", ...expected });
  });

  it("refuses an unknown app, says when a runtime takes no app commands, and turns a throw into failed", async () => {
    const runtime = await runningHollow();
    expect(
      await answerCommand({ v: 1, id: "a2", cmd: "restart", app: "nope" }, { runtime, ...noDiagnostics }),
    ).toMatchObject({ ok: false, err: "unknown_app", why: "no app nope on this node" });
    // A runtime without `operate` (an older or minimal one).
    const bare: Runtime = {
      put: () => undefined,
      remove: () => undefined,
      instances: () => [],
      onChange: () => () => undefined,
      sampleUsage: async () => [],
      shutdown: async () => undefined,
    };
    expect(
      await answerCommand(
        { v: 1, id: "a3", cmd: "start", app: "vision" },
        { runtime: bare, ...noDiagnostics },
      ),
    ).toMatchObject({ ok: false, err: "unsupported" });
    expect(await answerCommand({ v: 1, id: "a4", cmd: "diag" }, { runtime, ...noDiagnostics })).toMatchObject(
      {
        ok: false,
        err: "failed",
        why: "not asked",
      },
    );
    expect(
      await answerCommand({ v: 1, id: "a5", cmd: "report" }, { runtime, ...noDiagnostics }),
    ).toMatchObject({
      ok: true,
      rep: { st: 4, mx: 9 },
    });
  });

  it("trims a diagnostics bundle's oldest log lines to fit the reply limit", () => {
    const log = new RecentLog();
    for (let i = 0; i < 300; i++) log.push(`${i} ${"𝄞".repeat(300)}`);
    const lines = log.snapshot();
    expect(lines).toHaveLength(200);
    expect(lines[0]).toMatch(/^100 /);
    const bytes = encodeCommandReply({
      v: 1,
      id: "d1",
      ok: true,
      diag: { av: "1", os: "linux", arch: "x64", up: 1, cfg: {}, du: 0, dt: 0, log: lines, inst: [] },
    });
    expect(bytes.byteLength).toBeLessThanOrEqual(COMMAND_REPLY_LIMIT);
    const decoded = decodeMessage("commandReply", bytes);
    expect(decoded.ok).toBe(true);
    if (decoded.ok) {
      expect(decoded.msg.diag?.log.length).toBeLessThan(200);
      // The newest lines are the ones kept.
      expect(decoded.msg.diag?.log.at(-1)).toMatch(/^299 /);
    }
  });

  it("tells commands, credentials and deltas apart on the one downlink", () => {
    expect(downlinkMessageType(encodeMessage("commandRequest", { v: 1, id: "x", cmd: "diag" }))).toBe(
      "commandRequest",
    );
    // A real JWT is ~1 KiB: over a command's limit, within the credentials update's.
    const jwt = `${"a".repeat(1200)}.${"b".repeat(40)}.c`;
    expect(downlinkMessageType(encodeMessage("credentialsUpdate", { v: 1, jwt }))).toBe("credentialsUpdate");
    expect(
      downlinkMessageType(encodeMessage("desiredDelta", { v: 1, from: 0, to: 1, put: [], del: [] })),
    ).toBe("desiredDelta");
    expect(downlinkMessageType(new Uint8Array([0xc1]))).toBe("desiredDelta");
  });
});
