import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Agent } from "../src/agent/agent.js";
import { encodeMessage, type MessageOf } from "../src/protocol/index.js";
import type { ProcessRuntime } from "../src/runtime/process.js";
import { LinkCutter, type RunningNats, sleep, waitFor } from "../src/testing.js";
import { startTestAgent } from "./support/agent-fixture.js";
import { testCredentials, testNodeJwt, testUp } from "./support/credentials.js";
import { connectPlatform, createUpStream, startTestNats } from "./support/nats-server.js";
import { readUpStream, TestPlatform } from "./support/platform.js";

let server: RunningNats;
let platformConnection: NatsConnection;
let platform: TestPlatform;
let stateDir: string;
let agent: Agent | undefined;
let runtime: ProcessRuntime | undefined;

beforeAll(async () => {
  server = await startTestNats();
});
afterAll(async () => {
  await server.stop();
});

beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), "agent-sdk-agent-"));
  platformConnection = await connectPlatform(server);
  await createUpStream(platformConnection);
  // Each test starts from an empty stream.
  await (await jetstreamManager(platformConnection)).streams.purge("EF_UP");
  platform = new TestPlatform(platformConnection);
  platform.start();
});
afterEach(async () => {
  await agent?.stop(1_000);
  agent = undefined;
  platform.stop();
  await platformConnection.close();
  await rm(stateDir, { recursive: true, force: true });
});

const sleeper = (ver: string) => ({ app: "sleeper", ver, spec: { command: ["sleep", "1000"] } });

async function stored(type: "st" | "mx" | "ack") {
  return (await readUpStream(platformConnection)).filter((message) => message.type === type);
}

describe("agent", () => {
  it("applies the delta in the Hello reply, runs the app, acknowledges, and reports status", async () => {
    platform.change("n1", { put: sleeper("1.0") });
    ({ agent, runtime } = await startTestAgent(stateDir, [server.url], "n1"));
    await waitFor("sleeper running", () =>
      runtime?.instances().find((instance) => instance.st === "running") ? true : undefined,
    );
    expect(platform.hellos[0]?.hello.rev).toBe(0);
    await waitFor("ack of revision 1", async () =>
      (await stored("ack")).some((message) => (message.body as MessageOf<"desiredAck">).rev === 1)
        ? true
        : undefined,
    );
    const status = await waitFor("running status in the stream", async () =>
      (await stored("st")).find((message) =>
        (message.body as MessageOf<"statusReport">).inst.some((instance) => instance.st === "running"),
      ),
    );
    expect(status.subject).toBe(testUp("n1", "st"));
    expect((status.body as MessageOf<"statusReport">).inst).toEqual([
      { app: "sleeper", ver: "1.0", st: "running", rs: 0 },
    ]);
    // Idempotence is the report's own sequence, never a header the node picks (issue 8, #1).
    expect(status.msgId).toBeUndefined();

    // A live delta on its downlink: the app is removed and the removal acknowledged.
    platform.change("n1", { del: "sleeper" });
    await waitFor("sleeper gone", () => (runtime?.instances().length === 0 ? true : undefined));
    await waitFor("ack of revision 2", async () =>
      (await stored("ack")).some((message) => (message.body as MessageOf<"desiredAck">).rev === 2)
        ? true
        : undefined,
    );
    expect(agent.stats().appliedRevision).toBe(2);
  });

  it("cannot lose its reports to another node that forges their Nats-Msg-Id first (issue 8, #1)", async () => {
    // EF_UP is one stream for every tenant. A hostile node publishes on its own subject, with the
    // ids n1's reports would carry if agents chose one (`<wid>.<type>.<seq>` was guessable), into
    // a stream that deduplicates for 10 minutes. n1's reports must still be stored.
    const js = jetstream(platformConnection);
    for (let seq = 1; seq <= 5; seq++) {
      const forged = {
        st: encodeMessage("statusReport", { v: 1, seq, at: Date.now(), inst: [] }),
        ack: encodeMessage("desiredAck", { v: 1, rev: seq }),
      };
      for (const [type, payload] of Object.entries(forged)) {
        await js.publish(testUp("attacker", type as "st" | "ack"), payload, { msgID: `n1.${type}.${seq}` });
      }
    }
    platform.change("n1", { put: sleeper("1.0") });
    ({ agent, runtime } = await startTestAgent(stateDir, [server.url], "n1"));
    const status = await waitFor("n1's running status in the stream", async () =>
      (await stored("st")).find(
        (message) =>
          message.subject === testUp("n1", "st") &&
          (message.body as MessageOf<"statusReport">).inst.some((instance) => instance.st === "running"),
      ),
    );
    expect(status.msgId).toBeUndefined();
    await waitFor("n1's ack of revision 1", async () =>
      (await stored("ack")).some((message) => message.subject === testUp("n1", "ack")) ? true : undefined,
    );
  });

  it("heartbeats, sends metrics with host gauges, RTT and control bytes", async () => {
    const heartbeats: string[] = [];
    platformConnection.subscribe("ef.up.*.*.hb", {
      callback: (_error, msg) => {
        heartbeats.push(msg.subject);
      },
    });
    ({ agent, runtime } = await startTestAgent(stateDir, [server.url], "n2"));
    await waitFor("3 heartbeats", () => (heartbeats.length >= 3 ? true : undefined));
    expect(new Set(heartbeats)).toEqual(new Set([testUp("n2", "hb")]));
    const metrics = await waitFor("2 metrics reports", async () => {
      const found = await stored("mx");
      return found.length >= 2 ? found : undefined;
    });
    const report = metrics.at(-1)?.body as MessageOf<"metricsReport">;
    expect(report.mt).toBeGreaterThan(0);
    expect(report.mu).toBeGreaterThan(0);
    expect(report.dt).toBeGreaterThan(report.du);
    // One report of the first ones sent connected times the round trip (a PING of its own); the
    // next ones do not for four minutes.
    const rtts = metrics.map((message) => (message.body as MessageOf<"metricsReport">).rtt);
    expect(rtts.filter((rtt) => rtt !== undefined)).toEqual([expect.any(Number)]);
    expect(rtts.find((rtt) => rtt !== undefined)).toBeGreaterThan(0);
    expect(report.net.every((entry) => entry.if !== "lo")).toBe(true);
    expect(report.ctl.hb?.[0]).toBeGreaterThan(0);
    expect(report.ctl.hello?.[0]).toBeGreaterThan(0);
    expect(report.ctl.hello?.[1]).toBeGreaterThan(0);
    expect(metrics.map((message) => (message.body as MessageOf<"metricsReport">).seq)).toEqual(
      metrics.map((_, i) => i + 1),
    );
  });

  it("sends no heartbeat while its metrics reports are acknowledged, when the gateway counts them (HelloReply.rq)", async () => {
    platform.stop();
    // Metrics every second, heartbeats due every 2 s: while reports flow, none is needed.
    platform = new TestPlatform(platformConnection, { hb: 2, mx: 1, rq: true });
    platform.start();
    const heartbeats: number[] = [];
    platformConnection.subscribe("ef.up.*.*.hb", {
      callback: () => {
        heartbeats.push(Date.now());
      },
    });
    ({ agent, runtime } = await startTestAgent(stateDir, [server.url], "n9"));
    await waitFor("3 metrics reports", async () => ((await stored("mx")).length >= 3 ? true : undefined));
    const quietFrom = Date.now();
    await sleep(5_000);
    expect(heartbeats.filter((at) => at >= quietFrom)).toEqual([]);

    // The hub stops acknowledging reports (no stream): heartbeats come back, one per interval.
    await (await jetstreamManager(platformConnection)).streams.delete("EF_UP");
    const stalledAt = Date.now();
    await waitFor("heartbeats again", () =>
      heartbeats.filter((at) => at >= stalledAt).length >= 2 ? true : undefined,
    );
    expect(agent.stats().connected).toBe(true);
  });

  it("replaces a link that went silent without closing, and pings only when nothing else came in", async () => {
    const link = await LinkCutter.start(server.port);
    try {
      // Reports are acknowledged every second; the link is checked every 1.5 s.
      ({ agent, runtime } = await startTestAgent(stateDir, [`nats://127.0.0.1:${link.port}`], "n10", {
        linkCheckMs: 1_500,
        requestTimeoutMs: 500,
      }));
      // The first report times the round trip (a PING of its own, then none for minutes).
      await waitFor("a metrics report", async () => ((await stored("mx")).length >= 1 ? true : undefined));
      const pingsBefore = link.pings;
      await sleep(4_000);
      expect(link.pings - pingsBefore).toBe(0);

      // Silent without closing: only the check notices (the client's own pings come every 10 min).
      const hellos = agent.stats().hellosAnswered;
      link.freeze();
      await waitFor("a new connection after the link went silent", () =>
        link.opened >= 2 && (agent?.stats().hellosAnswered ?? 0) > hellos ? true : undefined,
      );
      expect(link.pings).toBeGreaterThan(pingsBefore);
    } finally {
      await agent?.stop(1_000);
      agent = undefined;
      await link.close();
    }
  });

  it("rejects a malformed delta with a counted reason and keeps working", async () => {
    ({ agent, runtime } = await startTestAgent(stateDir, [server.url], "n3"));
    await waitFor("connected", () => (agent?.stats().hellosAnswered ? true : undefined));
    platformConnection.publish(platform.downlink("n3"), new Uint8Array([0xc1]));
    platformConnection.publish(
      platform.downlink("n3"),
      new Uint8Array([0x82, 0xa1, 0x76, 0x07, 0xa1, 0x73, 0x01]),
    );
    await waitFor("two rejections", () => {
      const rejected = agent?.stats().rejected;
      return rejected?.not_msgpack === 1 && rejected.unknown_version === 1 ? true : undefined;
    });
    platform.change("n3", { put: sleeper("1.0") });
    await waitFor("sleeper running", () => (runtime?.instances()[0]?.st === "running" ? true : undefined));
  });

  it("asks again through Hello when it sees a gap, and reconnects resume from the applied revision", async () => {
    ({ agent, runtime } = await startTestAgent(stateDir, [server.url], "n4"));
    await waitFor("first hello", () => (platform.hellos.length === 1 ? true : undefined));
    platform.change("n4", { put: sleeper("1.0") });
    await waitFor("revision 1 applied", () => (agent?.stats().appliedRevision === 1 ? true : undefined));

    // Revision 2 is recorded but its delta is lost; revision 3 arrives: the agent must not skip 2.
    platform.record("n4", { put: { app: "other", ver: "1", spec: { command: ["sleep", "1000"] } } });
    platform.change("n4", { put: sleeper("2.0") });
    await waitFor("gap resolved by hello", () => (agent?.stats().appliedRevision === 3 ? true : undefined));
    const gapHello = platform.hellos.at(-1);
    expect(gapHello?.hello.rev).toBe(1);
    await waitFor("both apps running", () =>
      runtime?.instances().filter((instance) => instance.st === "running").length === 2 ? true : undefined,
    );

    // A server restart: the agent reconnects and says it has revision 3, so it gets nothing again.
    const hellosBefore = platform.hellos.length;
    await server.kill();
    await sleep(300);
    await server.start();
    await waitFor("hello after reconnect", () => (platform.hellos.length > hellosBefore ? true : undefined));
    expect(platform.hellos.at(-1)?.hello.rev).toBe(3);
    expect(platform.deltaSince("n4", 3)).toBeNull();
  });
});

describe("re-issued credentials (issue 8 #2, #12)", () => {
  it("migrates from subject layout 1 at its first Hello: switches, resyncs, reports on the new subjects", async () => {
    // Enrolled before site scoping: its credentials name `ef.up.<wid>.>` and `ef.down.<wid>`.
    platform.change("m1", { put: sleeper("1.0") });
    platform.reissueAtHello("m1", testNodeJwt("m1"));
    let saved: string | undefined;
    ({ agent, runtime } = await startTestAgent(stateDir, [server.url], "m1", {
      credentials: testCredentials("m1", null),
      saveCredentials: async (jwt) => {
        saved = jwt;
      },
    }));
    await waitFor("a Hello on the layout-2 subjects", () =>
      platform.hellos.some((entry) => entry.wid === "m1" && entry.site === "_t") ? true : undefined,
    );
    // The first Hello came on layout 1; nothing durable went out before the switch.
    expect(platform.hellos[0]).toMatchObject({ wid: "m1", site: null });
    expect(saved).toBe(testNodeJwt("m1"));
    expect(agent.stats()).toMatchObject({ credentialSwitches: 1, address: { site: "_t", wid: "m1" } });
    await waitFor("sleeper running", () => (runtime?.instances()[0]?.st === "running" ? true : undefined));
    await waitFor("ack and status on the new subjects", async () => {
      const all = await readUpStream(platformConnection);
      return all.some((message) => message.subject === testUp("m1", "ack")) &&
        all.some((message) => message.subject === testUp("m1", "st"))
        ? true
        : undefined;
    });
    expect(
      (await readUpStream(platformConnection)).every((message) => message.subject.startsWith("ef.up._t.")),
    ).toBe(true);
    // Its new downlink works.
    platform.change("m1", { del: "sleeper" });
    await waitFor("sleeper removed", () => (runtime?.instances().length === 0 ? true : undefined));
  });

  it("moves to another site when credentials are pushed on its downlink, and keeps reporting", async () => {
    ({ agent, runtime } = await startTestAgent(stateDir, [server.url], "m2"));
    await waitFor("first Hello", () => (agent?.stats().hellosAnswered ? true : undefined));
    const hellos = platform.hellos.length;
    platform.pushCredentials("m2", testNodeJwt("m2", "_u"));
    await waitFor("a Hello from the new site", () =>
      platform.hellos.slice(hellos).some((entry) => entry.site === "_u") ? true : undefined,
    );
    expect(agent.stats()).toMatchObject({ credentialSwitches: 1, address: { site: "_u" } });
    // A fresh status snapshot on the new site's subjects, and the new downlink in use.
    await waitFor("status on the new subjects", async () =>
      (await stored("st")).some((message) => message.subject === testUp("m2", "st", "_u")) ? true : undefined,
    );
    platform.change("m2", { put: sleeper("1.0") });
    await waitFor("sleeper running", () => (runtime?.instances()[0]?.st === "running" ? true : undefined));
  });

  it("ignores credentials of another node", async () => {
    ({ agent, runtime } = await startTestAgent(stateDir, [server.url], "m3"));
    await waitFor("first Hello", () => (agent?.stats().hellosAnswered ? true : undefined));
    platform.pushCredentials("m3", testNodeJwt("m4", "_u"));
    await sleep(500);
    expect(agent.stats()).toMatchObject({ credentialSwitches: 0, address: { site: "_t", wid: "m3" } });
  });
});

describe("offline buffer", () => {
  it("removes a report only after its PubAck: while the stream does not answer, reports stay buffered", async () => {
    ({ agent, runtime } = await startTestAgent(stateDir, [server.url], "n6"));
    await waitFor("first metrics delivered", async () =>
      (await stored("mx")).length >= 1 ? true : undefined,
    );
    const jsm = await jetstreamManager(platformConnection);
    await jsm.streams.delete("EF_UP");
    const readSeq = async () =>
      (JSON.parse(await readFile(join(stateDir, "state.json"), "utf8")) as { seq: { mx: number } }).seq.mx;
    // Every report numbered after this one is created while the stream is gone.
    const lastBeforeGap = await readSeq();
    // Connected, but every publish fails (no responders): nothing may be dropped.
    await sleep(3_000);
    expect(agent.stats().connected).toBe(true);
    expect(agent.stats().outbox.records).toBeGreaterThanOrEqual(2);
    await createUpStream(platformConnection);
    await waitFor("outbox drained", () => (agent?.stats().outbox.records === 0 ? true : undefined), 40_000);
    await agent.stop(1_000);
    agent = undefined;
    const seqs = (await stored("mx")).map((message) => (message.body as MessageOf<"metricsReport">).seq);
    // The new stream holds every report from the gap on (maybe one in flight at deletion), in order, once.
    expect(seqs[0]).toBeLessThanOrEqual(lastBeforeGap + 1);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => (seqs[0] as number) + i));
    expect(seqs.at(-1)).toBe(await readSeq());
  });

  it("keeps reports on disk across link loss and an agent restart; delivers each exactly once, in order", async () => {
    ({ agent, runtime } = await startTestAgent(stateDir, [server.url], "n5"));
    await waitFor("first metrics delivered", async () =>
      (await stored("mx")).length >= 1 ? true : undefined,
    );

    await server.kill();
    // Status changes and metrics while offline: they must accumulate on disk.
    runtime.put("local", "1", { command: ["sleep", "1000"] });
    await sleep(3_500);
    expect(agent.stats().connected).toBe(false);
    const buffered = agent.stats().outbox.records;
    expect(buffered).toBeGreaterThanOrEqual(3);
    await agent.stop(200);
    expect((await readdir(join(stateDir, "outbox"))).some((name) => name.endsWith(".seg"))).toBe(true);

    // Agent restarts while still offline, buffers more, then the link comes back.
    ({ agent, runtime } = await startTestAgent(stateDir, [server.url], "n5"));
    await sleep(2_000);
    expect(agent.stats().outbox.records).toBeGreaterThan(buffered);
    await server.start();
    await waitFor("outbox drained", () => (agent?.stats().outbox.records === 0 ? true : undefined), 30_000);
    await agent.stop(1_000);
    agent = undefined;

    // The test's own connection reconnects on its own schedule: retry until it answers.
    const all = await waitFor("stream contents", () => readUpStream(platformConnection));
    const state = JSON.parse(await readFile(join(stateDir, "state.json"), "utf8")) as {
      seq: { st: number; mx: number };
    };
    for (const type of ["st", "mx"] as const) {
      const seqs = all
        .filter((message) => message.type === type)
        .map((message) => (message.body as MessageOf<"metricsReport">).seq);
      // Every sequence number the agent ever used, once each, in order: nothing lost, nothing twice.
      expect(seqs, `${type} sequences in the stream`).toEqual(
        Array.from({ length: state.seq[type] }, (_, i) => i + 1),
      );
    }
    // Exactly once by sequence alone: no deduplication header is involved (issue 8, #1).
    expect(all.filter((message) => message.msgId !== undefined)).toEqual([]);
  });
});
