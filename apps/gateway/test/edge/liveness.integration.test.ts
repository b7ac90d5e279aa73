import { encodeMessage, platformUpSubject } from "@edgefleet/agent-sdk/protocol";
import { waitFor } from "@edgefleet/nats-tenancy/testing";
import { jetstream } from "@nats-io/jetstream";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEdgeMetrics } from "../../src/edge/edge-metrics.js";
import { HeartbeatBatcher } from "../../src/edge/liveness/heartbeat-batcher.js";
import { OfflineSweeper } from "../../src/edge/liveness/offline-sweeper.js";
import { livenessTiming } from "../../src/edge/liveness/timing.js";
import { type EdgeHarness, startEdgeHarness, type TestNode } from "../support/edge-harness.js";
import { metricsReportBody } from "../support/up-messages.js";

// Heartbeat interval 1 s, flush 200 ms: offline after 3 intervals + 0.8 s slack.
const timing = livenessTiming(1_000, 200);
let harness: EdgeHarness;
beforeAll(async () => {
  harness = await startEdgeHarness();
});
afterAll(async () => {
  await harness?.stop();
});

const heartbeat = (node: TestNode, s = 1) =>
  harness.nc.publish(
    platformUpSubject(node.org, node.address, "hb"),
    encodeMessage("heartbeat", { v: 1, s }),
  );
/** A MetricsReport through EF_UP, as an agent's outbox sends it (JetStream, PubAck). */
const metricsReport = (node: TestNode, seq: number) =>
  jetstream(harness.nc, { domain: "hub" }).publish(
    platformUpSubject(node.org, node.address, "mx"),
    encodeMessage("metricsReport", metricsReportBody(seq)),
  );
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const nodeRow = (id: string) => harness.db.node.findUniqueOrThrow({ where: { id } });
const heartbeatUntilOnline = async (node: TestNode) => {
  heartbeat(node);
  await waitFor(
    "online",
    async () => ((await nodeRow(node.id)).status === "online" ? true : undefined),
    2_000,
  );
};

describe("liveness", () => {
  it("derives timing that never sweeps a node whose heartbeats flow", () => {
    expect(timing.offlineAfterMs).toBe(3_800);
    // Worst-case age of the stored last_seen_at while heartbeats arrive every interval, one of
    // them lost (a hub restart drops core-NATS messages in flight).
    expect(timing.refreshAfterMs + 2 * timing.heartbeatIntervalMs + timing.flushIntervalMs).toBeLessThan(
      timing.offlineAfterMs,
    );
    const production = livenessTiming(30_000, 2_000);
    expect(production.offlineAfterMs).toBe(100_000);
    expect(
      production.refreshAfterMs + 2 * production.heartbeatIntervalMs + production.flushIntervalMs,
    ).toBeLessThan(production.offlineAfterMs);
    expect(production.refreshAfterMs).toBeGreaterThan(production.heartbeatIntervalMs); // every other heartbeat
  });

  it("a heartbeat makes a node online within two intervals and flowing heartbeats keep it there", async () => {
    const org = await harness.createOrganization("live-a");
    const node = await harness.createNode(org, "n1");
    const started = Date.now();
    await heartbeatUntilOnline(node);
    expect(Date.now() - started).toBeLessThan(2 * timing.heartbeatIntervalMs);

    // Heartbeats every interval for 4 s: never swept, even though not every one is written.
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, timing.heartbeatIntervalMs));
      heartbeat(node, i + 2);
      expect((await nodeRow(node.id)).status).toBe("online");
    }
    const swept = () => harness.db.nodeStatusEvent.count({ where: { nodeId: node.id, toStatus: "offline" } });
    expect(await swept()).toBe(0);
  });

  it("a live node that loses one heartbeat (a hub restart) is not swept", async () => {
    const org = await harness.createOrganization("live-lost");
    const node = await harness.createNode(org, "n1");
    await heartbeatUntilOnline(node);
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // One heartbeat not written (younger than refreshAfter), the next one lost, the one after it
    // a little late: the stored last_seen_at is then ~3.2 intervals old when it is flushed.
    // Tolerating no lost heartbeat (offline after 2 intervals + slack) usually swept the node
    // here; the first test's inequality is the deterministic form of the same rule.
    await sleep(timing.heartbeatIntervalMs);
    heartbeat(node, 2);
    await sleep(2 * timing.heartbeatIntervalMs + 200);
    heartbeat(node, 4);
    await sleep(2 * timing.flushIntervalMs + timing.sweepIntervalMs);
    expect((await nodeRow(node.id)).status).toBe("online");
    expect(await harness.db.nodeStatusEvent.count({ where: { nodeId: node.id, toStatus: "offline" } })).toBe(
      0,
    );
  });

  it("silence makes an online node offline", async () => {
    const org = await harness.createOrganization("live-silent");
    const node = await harness.createNode(org, "n1");
    await heartbeatUntilOnline(node);
    const silentSince = Date.now();
    await waitFor(
      "offline",
      async () => ((await nodeRow(node.id)).status === "offline" ? true : undefined),
      timing.offlineAfterMs + 2 * timing.sweepIntervalMs + 1_000,
    );
    expect(Date.now() - silentSince).toBeGreaterThan(timing.heartbeatIntervalMs);
    expect(await harness.metric("edgefleet_gateway_nodes_marked_offline_total")).toBeGreaterThanOrEqual(1);
  });

  it("the batcher writes many nodes in one UPDATE, and does not rewrite fresh rows", async () => {
    const org = await harness.createOrganization("live-b");
    const nodes = await Promise.all(Array.from({ length: 50 }, (_, i) => harness.createNode(org, `b${i}`)));
    const registry = new Registry();
    const metrics = createEdgeMetrics(registry);
    const batcher = new HeartbeatBatcher(harness.db, timing, metrics, pino({ level: "silent" }));
    for (const node of nodes) batcher.see(node.id);
    await batcher.flush();
    expect((await metrics.livenessUpdates.get()).values[0]?.value).toBe(1);
    expect((await metrics.livenessRows.get()).values[0]?.value).toBe(50);
    const ids = nodes.map((node) => node.id);
    const online = await harness.db.node.findMany({ where: { id: { in: ids } } });
    expect(online.every((row) => row.status === "online" && row.lastSeenAt !== null)).toBe(true);

    // Seen again right away: one statement, zero rows rewritten, last_seen_at untouched.
    for (const node of nodes) batcher.see(node.id);
    await batcher.flush();
    expect((await metrics.livenessUpdates.get()).values[0]?.value).toBe(2);
    expect((await metrics.livenessRows.get()).values[0]?.value).toBe(50);
    const again = await harness.db.node.findMany({ where: { id: { in: ids } } });
    expect(again.map((row) => row.lastSeenAt?.getTime()).sort()).toEqual(
      online.map((row) => row.lastSeenAt?.getTime()).sort(),
    );
  });

  it("rejects heartbeats of unknown nodes, other organizations' tokens and bad payloads", async () => {
    const org = await harness.createOrganization("live-c");
    const other = await harness.createOrganization("live-d");
    const node = await harness.createNode(org, "c1");
    const reasons = ["unknown_node", "not_msgpack", "unknown_version", "too_large", "invalid"];
    const before = Object.fromEntries(
      await Promise.all(
        reasons.map(async (reason) => [
          reason,
          await harness.metric("edgefleet_gateway_rejected_messages_total", { type: "hb", reason }),
        ]),
      ),
    );
    // The node's wire id under another organization's token: not this node.
    harness.nc.publish(
      platformUpSubject(other.org, node.address, "hb"),
      encodeMessage("heartbeat", { v: 1, s: 1 }),
    );
    harness.nc.publish(
      platformUpSubject(org.org, { ...node.address, wid: "zzzzzz" }, "hb"),
      encodeMessage("heartbeat", { v: 1, s: 1 }),
    );
    const subject = platformUpSubject(org.org, node.address, "hb");
    harness.nc.publish(subject, new Uint8Array([0xc1]));
    harness.nc.publish(subject, Uint8Array.from([0x82, 0xa1, 0x76, 0x02, 0xa1, 0x73, 0x01])); // {v:2,s:1}
    harness.nc.publish(subject, new Uint8Array(65));
    harness.nc.publish(subject, Uint8Array.from([0x81, 0xa1, 0x76, 0x01])); // {v:1}, no s
    await waitFor("rejections counted", async () => {
      const after = await harness.metric("edgefleet_gateway_rejected_messages_total", {
        type: "hb",
        reason: "invalid",
      });
      return after > (before.invalid ?? 0) ? true : undefined;
    });
    for (const [reason, delta] of [
      ["unknown_node", 2],
      ["not_msgpack", 1],
      ["unknown_version", 1],
      ["too_large", 1],
      ["invalid", 1],
    ] as const) {
      expect(await harness.metric("edgefleet_gateway_rejected_messages_total", { type: "hb", reason })).toBe(
        (before[reason] ?? 0) + delta,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 3 * timing.flushIntervalMs));
    expect((await nodeRow(node.id)).status).toBe("offline");
    expect(
      harness.logs.some((line) => line.msg === "edge message rejected" && line.reason === "too_large"),
    ).toBe(true);
  });

  it("a node whose only sign of life is its metrics reports stays online past the heartbeat bound", async () => {
    const org = await harness.createOrganization("live-mx");
    const node = await harness.createNode(org, "m1");
    await heartbeatUntilOnline(node);
    // No heartbeat after this one: an agent skips them while its reports flow. Reports every
    // interval for longer than offlineAfterMs (3.8 s) keep the node online.
    const until = Date.now() + timing.offlineAfterMs + 2 * timing.sweepIntervalMs + 1_000;
    for (let seq = 1; Date.now() < until; seq++) {
      await metricsReport(node, seq);
      await sleep(timing.heartbeatIntervalMs);
    }
    expect((await nodeRow(node.id)).status).toBe("online");
    expect(await harness.db.nodeStatusEvent.count({ where: { nodeId: node.id, toStatus: "offline" } })).toBe(
      0,
    );

    // The reports stop too: swept after the bound, as with heartbeats.
    await waitFor(
      "offline",
      async () => ((await nodeRow(node.id)).status === "offline" ? true : undefined),
      timing.offlineAfterMs + 2 * timing.sweepIntervalMs + 1_000,
    );
    // A report the hub stores after that brings it back (its agent sends no heartbeat to do so).
    await metricsReport(node, 1_000);
    await waitFor("online again", async () =>
      (await nodeRow(node.id)).status === "online" ? true : undefined,
    );
  });

  it("a report stored before a node went offline does not bring it back; one stored after does", async () => {
    const org = await harness.createOrganization("live-late");
    const node = await harness.createNode(org, "l1");
    const registry = new Registry();
    const batcher = new HeartbeatBatcher(
      harness.db,
      timing,
      createEdgeMetrics(registry),
      pino({ level: "silent" }),
    );
    batcher.see(node.id);
    await batcher.flush();
    await harness.db.node.update({ where: { id: node.id }, data: { status: "offline" } });
    const offlineAt = (await nodeRow(node.id)).updatedAt;

    // Its last report, delivered late (ingest lag, a redelivery): stored before it went offline.
    batcher.seenAt(node.id, new Date(offlineAt.getTime() - 1_000));
    await batcher.flush();
    expect((await nodeRow(node.id)).status).toBe("offline");

    // A report stored after it: alive again. last_seen_at is the hub's time of the report.
    const storedAt = new Date(offlineAt.getTime() + 500);
    batcher.seenAt(node.id, storedAt);
    await batcher.flush();
    const row = await nodeRow(node.id);
    expect(row.status).toBe("online");
    expect(row.lastSeenAt?.getTime()).toBe(storedAt.getTime());
    // An older report never moves last_seen_at back.
    batcher.seenAt(node.id, new Date(storedAt.getTime() - 60_000));
    await batcher.flush();
    expect((await nodeRow(node.id)).lastSeenAt?.getTime()).toBe(storedAt.getTime());
  });

  it("the sweeper judges liveness as of the oldest report still waiting in EF_UP", async () => {
    const org = await harness.createOrganization("live-lag");
    const node = await harness.createNode(org, "g1");
    const staleFor = timing.offlineAfterMs + 5_000;
    const stale = () =>
      harness.db.node.update({
        where: { id: node.id },
        data: { status: "online", lastSeenAt: new Date(Date.now() - staleFor) },
      });
    await stale();
    const metrics = createEdgeMetrics(new Registry());
    const logger = pino({ level: "silent" });
    // Ingest is 10 s behind (a stand-in clock for EF_UP's oldest message): 5 s past the bound as
    // of now, but not as of where ingest is, so the node's reports may be in the backlog.
    let upTo: Date | null = new Date(Date.now() - 10_000);
    const sweeper = new OfflineSweeper(harness.db, timing, metrics, logger, async () => upTo);
    expect(await sweeper.sweep()).not.toContain(node.id);
    expect((await nodeRow(node.id)).status).toBe("online");
    // Ingest caught up: swept.
    upTo = null;
    expect(await sweeper.sweep()).toContain(node.id);

    // A message stuck in EF_UP for an hour holds the sweep at most 3 offline bounds (11.4 s here).
    await harness.db.node.update({
      where: { id: node.id },
      data: { status: "online", lastSeenAt: new Date(Date.now() - 20_000) },
    });
    upTo = new Date(Date.now() - 3_600_000);
    expect(await sweeper.sweep()).toContain(node.id);

    // And the real EF_UP position: null when the stream is empty, else its oldest message's time.
    const ingest = harness.services.find((service) => service.name === "up-ingest") as unknown as {
      ingestedUpTo(): Promise<Date | null>;
    };
    await waitFor("EF_UP drained", async () => ((await ingest.ingestedUpTo()) === null ? true : undefined));
  });
});
