import { randomUUID } from "node:crypto";
import {
  decodeMessage,
  encodeMessage,
  type MetricsReport,
  platformUpSubject,
  type StatusReport,
} from "@edgefleet/agent-sdk/protocol";
import { INSTANCES_CHANGED_CHANNEL, setDesiredApps } from "@edgefleet/db";
import { waitFor } from "@edgefleet/nats-tenancy/testing";
import { encode } from "@msgpack/msgpack";
import { type JetStreamClient, jetstream } from "@nats-io/jetstream";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeStatusReports } from "../../src/edge/ingest/status-writer.js";
import { type EdgeHarness, startEdgeHarness, type TestNode } from "../support/edge-harness.js";
import { requireTestEnv } from "../support/required-env.js";

let harness: EdgeHarness;
let js: JetStreamClient;
let org: { id: string; org: string };
let web: { appId: string; v1: string; v2: string };

beforeAll(async () => {
  harness = await startEdgeHarness();
  js = jetstream(harness.nc, { domain: "hub" });
  org = await harness.createOrganization(`ingest-${randomUUID().slice(0, 8)}`);
  const app = await harness.db.app.create({ data: { organizationId: org.id, name: "web" } });
  const v1 = await harness.db.appVersion.create({
    data: { organizationId: org.id, appId: app.id, version: "1.0", artifactUrl: "https://a.test/1" },
  });
  const v2 = await harness.db.appVersion.create({
    data: { organizationId: org.id, appId: app.id, version: "2.0", artifactUrl: "https://a.test/2" },
  });
  web = { appId: app.id, v1: v1.id, v2: v2.id };
});
afterAll(async () => {
  await harness?.stop();
});

const rejected = (type: string, reason: string) =>
  harness.metric("edgefleet_gateway_rejected_messages_total", { type, reason });

async function waitForCount(type: string, reason: string, atLeast: number) {
  await waitFor(`${type}/${reason} >= ${atLeast}`, async () =>
    (await rejected(type, reason)) >= atLeast ? true : undefined,
  );
}

function status(
  seq: number,
  st: StatusReport["inst"][number]["st"],
  extra: Partial<StatusReport["inst"][number]> = {},
) {
  return encodeMessage("statusReport", {
    v: 1,
    seq,
    at: Date.now(),
    inst: [{ app: "web", ver: "1.0", st, rs: seq, ...extra }],
  });
}

async function nodeWithWeb(name: string): Promise<TestNode> {
  const node = await harness.createNode(org, name);
  await setDesiredApps(harness.db, org.id, node.id, { put: [web.v1] });
  return node;
}

const instance = (node: TestNode) =>
  harness.db.appInstance.findUniqueOrThrow({
    where: { nodeId_appId: { nodeId: node.id, appId: web.appId } },
  });

/** Notifications of one Postgres channel, as the rollout controller hears them. */
async function listen(channel: string) {
  const client = new pg.Client({ connectionString: harness.databaseUrl });
  await client.connect();
  const payloads: string[] = [];
  client.on("notification", (message) => {
    if (message.channel === channel && message.payload) payloads.push(message.payload);
  });
  await client.query(`LISTEN ${channel}`);
  return { payloads, close: () => client.end() };
}

describe("EF_UP status ingest", () => {
  it("stores a StatusReport; redelivery and older reports never duplicate or regress it", async () => {
    const node = await nodeWithWeb("st-1");
    const subject = platformUpSubject(node.org, node.address, "st");
    await js.publish(subject, status(5, "running"));
    await waitFor("running", async () => ((await instance(node)).state === "running" ? true : undefined));
    const stored = await instance(node);
    expect(stored).toMatchObject({ state: "running", restarts: 5, observedVersionId: web.v1, statusSeq: 5n });

    const duplicates = await rejected("st", "duplicate");
    const outOfOrder = await rejected("st", "out_of_order");
    // The same report again (a redelivery: agents send no Nats-Msg-Id) and an older one.
    await js.publish(subject, status(5, "failed", { why: "replayed" }));
    await js.publish(subject, status(3, "starting"));
    await waitForCount("st", "out_of_order", outOfOrder + 1);
    await waitForCount("st", "duplicate", duplicates + 1);
    expect(await instance(node)).toMatchObject({
      state: "running",
      restarts: 5,
      reason: null,
      statusSeq: 5n,
    });

    await js.publish(subject, status(6, "failed", { why: "exit code 2", ver: "9.9" }));
    await waitFor("failed", async () => ((await instance(node)).state === "failed" ? true : undefined));
    // An observed version the control plane does not know is stored as unknown, not guessed.
    expect(await instance(node)).toMatchObject({
      reason: "exit code 2",
      observedVersionId: null,
      restarts: 6,
    });
    expect((await harness.db.node.findUniqueOrThrow({ where: { id: node.id } })).statusSeq).toBe(6n);
  });

  it("stores a version switch (tgt, pb, pt) and when the state changed, and wakes rollout controllers only on changes", async () => {
    const node = await nodeWithWeb("st-switch");
    const subject = platformUpSubject(node.org, node.address, "st");
    const listener = await listen(INSTANCES_CHANGED_CHANNEL);
    await js.publish(subject, status(1, "running"));
    await waitFor("running", async () => ((await instance(node)).state === "running" ? true : undefined));
    const running = await instance(node);
    await waitFor("a wake-up", () => (listener.payloads.includes(org.id) ? true : undefined));

    // Pulling 2.0 while 1.0 runs: the switch's state, bytes, target.
    listener.payloads.length = 0;
    await js.publish(subject, status(2, "pulling", { tgt: "2.0", pb: 4096, pt: 10_000 }));
    const pulling = await waitFor("pulling", async () => {
      const row = await instance(node);
      return row.state === "pulling" ? row : undefined;
    });
    expect(pulling).toMatchObject({
      observedVersionId: web.v1,
      targetVersionId: web.v2,
      pulledBytes: 4096n,
      totalBytes: 10_000n,
    });
    expect(pulling.stateChangedAt.getTime()).toBeGreaterThan(running.stateChangedAt.getTime());
    await waitFor("a wake-up for the switch", () => (listener.payloads.includes(org.id) ? true : undefined));

    // More bytes only: progress is stored, the state did not change (no wake-up, same time).
    listener.payloads.length = 0;
    await js.publish(subject, status(3, "pulling", { tgt: "2.0", pb: 8192, pt: 10_000 }));
    const progressed = await waitFor("progress", async () => {
      const row = await instance(node);
      return row.pulledBytes === 8192n ? row : undefined;
    });
    expect(progressed.stateChangedAt).toEqual(pulling.stateChangedAt);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(listener.payloads).toEqual([]);

    // The switch done: 2.0 runs, no target any more.
    await js.publish(subject, status(4, "running", { ver: "2.0" }));
    const switched = await waitFor("2.0 running", async () => {
      const row = await instance(node);
      return row.observedVersionId === web.v2 ? row : undefined;
    });
    expect(switched).toMatchObject({
      state: "running",
      targetVersionId: null,
      pulledBytes: null,
      totalBytes: null,
    });
    await listener.close();
  });

  it("stores many nodes' reports in one statement, each with its own outcome, and wakes each organization once", async () => {
    const nodes = await Promise.all(Array.from({ length: 6 }, (_, i) => nodeWithWeb(`st-batch-${i}`)));
    const other = await harness.createOrganization(`ingest-batch-${randomUUID().slice(0, 8)}`);
    const otherApp = await harness.db.app.create({ data: { organizationId: other.id, name: "web" } });
    const otherVersion = await harness.db.appVersion.create({
      data: { organizationId: other.id, appId: otherApp.id, version: "1.0", artifactUrl: "https://a.test/o" },
    });
    const foreign = await harness.createNode(other, "st-batch-other");
    await setDesiredApps(harness.db, other.id, foreign.id, { put: [otherVersion.id] });
    const report = (seq: number, st: StatusReport["inst"][number]["st"], extra = {}) =>
      ({
        v: 1,
        seq,
        at: Date.now(),
        inst: [{ app: "web", ver: "1.0", st, rs: seq, ...extra }],
      }) as StatusReport;
    const of = (node: TestNode) => ({ id: node.id, organizationId: node.organizationId });
    // Nodes 3 and 4 have stored seq 5 already.
    expect(
      await writeStatusReports(harness.db, [
        { node: of(nodes[3] as TestNode), report: report(5, "running") },
        { node: of(nodes[4] as TestNode), report: report(5, "running") },
      ]),
    ).toEqual(["stored", "stored"]);

    const listener = await listen(INSTANCES_CHANGED_CHANNEL);
    const outcomes = await writeStatusReports(harness.db, [
      { node: of(nodes[0] as TestNode), report: report(1, "running") },
      { node: of(nodes[1] as TestNode), report: report(2, "failed", { why: "exit code 3" }) },
      { node: of(nodes[2] as TestNode), report: report(7, "pulling", { tgt: "2.0", pb: 10, pt: 100 }) },
      { node: of(nodes[3] as TestNode), report: report(5, "failed", { why: "replayed" }) },
      { node: of(nodes[4] as TestNode), report: report(4, "starting") },
      { node: of(nodes[5] as TestNode), report: { v: 1, seq: 3, at: Date.now(), inst: [] } },
      { node: of(foreign), report: report(9, "running") },
    ]);
    expect(outcomes).toEqual(["stored", "stored", "stored", "duplicate", "out_of_order", "stored", "stored"]);
    expect(await instance(nodes[0] as TestNode)).toMatchObject({ state: "running", statusSeq: 1n });
    expect(await instance(nodes[1] as TestNode)).toMatchObject({
      state: "failed",
      reason: "exit code 3",
      restarts: 2,
    });
    expect(await instance(nodes[2] as TestNode)).toMatchObject({
      state: "pulling",
      observedVersionId: web.v1,
      targetVersionId: web.v2,
      pulledBytes: 10n,
    });
    // The duplicate and the older report changed nothing.
    expect(await instance(nodes[3] as TestNode)).toMatchObject({
      state: "running",
      reason: null,
      statusSeq: 5n,
    });
    expect(await instance(nodes[4] as TestNode)).toMatchObject({ state: "running", statusSeq: 5n });
    // A report without instances still moves the node's sequence; the other organization's app
    // (also named "web") got its own node's report, not one of ours.
    expect((await harness.db.node.findUniqueOrThrow({ where: { id: nodes[5]?.id } })).statusSeq).toBe(3n);
    expect(
      await harness.db.appInstance.findUniqueOrThrow({
        where: { nodeId_appId: { nodeId: foreign.id, appId: otherApp.id } },
      }),
    ).toMatchObject({ state: "running", statusSeq: 9n, observedVersionId: otherVersion.id });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect([...listener.payloads].sort()).toEqual([org.id, other.id].sort());
    await listener.close();
    await expect(
      writeStatusReports(harness.db, [
        { node: of(nodes[0] as TestNode), report: report(2, "running") },
        { node: of(nodes[0] as TestNode), report: report(3, "running") },
      ]),
    ).rejects.toThrow("one report per node");
  });

  it("terminates malformed, oversized, unknown-version and foreign-subject reports without touching rows", async () => {
    const node = await nodeWithWeb("st-bad");
    const other = await harness.createOrganization(`ingest-other-${randomUUID().slice(0, 8)}`);
    const subject = platformUpSubject(node.org, node.address, "st");
    const before = {
      not_msgpack: await rejected("st", "not_msgpack"),
      too_large: await rejected("st", "too_large"),
      unknown_version: await rejected("st", "unknown_version"),
      invalid: await rejected("st", "invalid"),
      unknown_node: await rejected("st", "unknown_node"),
    };
    await js.publish(subject, new Uint8Array([0xc1, 0x00]));
    await js.publish(subject, new Uint8Array(64 * 1024 + 1));
    await js.publish(subject, Uint8Array.from([0x81, 0xa1, 0x76, 0x02]));
    await js.publish(subject, encodeMessage("heartbeat", { v: 1, s: 1 })); // valid msgpack, wrong schema
    await js.publish(platformUpSubject(other.org, node.address, "st"), status(10, "running"));
    for (const [reason, count] of Object.entries(before)) await waitForCount("st", reason, count + 1);
    expect(await instance(node)).toMatchObject({ state: "pending", statusSeq: 0n, restarts: 0 });

    // Schema-valid once, now refused: values Postgres cannot store (NUL in text, int4 overflow)
    // are invalid at intake, not redelivered 20 times with a stack trace each (issue 8, #4).
    const invalidBefore = await rejected("st", "invalid");
    const poison = (inst: Record<string, unknown>) => encode({ v: 1, seq: 20, at: Date.now(), inst: [inst] });
    await js.publish(subject, poison({ app: "web", ver: "1.0", st: "failed", why: "boom\u0000", rs: 1 }));
    await js.publish(subject, poison({ app: "web", ver: "1.0", st: "running", rs: 2 ** 31 }));
    await js.publish(subject, poison({ app: "we\u0000b", st: "running", rs: 0 }));
    await waitForCount("st", "invalid", invalidBefore + 3);
    expect(harness.logs.filter((line) => line.msg === "EF_UP message handling failed; redelivering")).toEqual(
      [],
    );

    // Terminated, so never redelivered: the consumer has nothing pending or in flight.
    const info = await (await js.consumers.get("EF_UP", "gateway")).info();
    await waitFor("consumer drained", async () => {
      const now = await (await js.consumers.get("EF_UP", "gateway")).info();
      return now.num_ack_pending === 0 && now.num_pending === 0 ? true : undefined;
    });
    expect(info.config.ack_policy).toBe("explicit");
  });
});

describe("EF_UP metrics ingest", () => {
  const mimirUrl = () => requireTestEnv("MIMIR_URL");

  async function query(tenant: string, promql: string) {
    const url = new URL("/prometheus/api/v1/query", mimirUrl());
    url.searchParams.set("query", promql);
    const response = await fetch(url, {
      headers: { "X-Scope-OrgID": tenant },
      signal: AbortSignal.timeout(10_000),
    }).catch((error: unknown) => {
      // Seen when Mimir listens on loopback but its query frontend advertises another address.
      throw new Error(
        `Mimir query timed out or failed (${String(error)}): its config needs frontend.address: 127.0.0.1`,
      );
    });
    const body = (await response.json()) as {
      status: string;
      data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
    };
    expect(body.status).toBe("success");
    return body.data.result;
  }

  function report(seq: number, at: number): Uint8Array {
    const message: MetricsReport = {
      v: 1,
      seq,
      at,
      cpu: 250,
      mu: 1_000_000,
      mt: 4_000_000,
      du: 10,
      dt: 100,
      rtt: 12_000,
      net: [{ if: "eth0", rx: 5_000, tx: 7_000 }],
      apps: [{ app: "web", cpu: 100, mem: 2_048 }],
      ctl: { hb: [80, 0], hello: [60, 40] },
    };
    return encodeMessage("metricsReport", message);
  }

  it("writes a node's metrics to Mimir under its organization only", async () => {
    const node = await nodeWithWeb("mx-1");
    const other = await harness.createOrganization(`mx-other-${randomUUID().slice(0, 8)}`);
    // The instance runs 1.0 with 4 restarts: the per-app series carry both (issue 11).
    await js.publish(platformUpSubject(node.org, node.address, "st"), status(4, "running"));
    await waitFor("running", async () => ((await instance(node)).state === "running" ? true : undefined));
    const subject = platformUpSubject(node.org, node.address, "mx");
    await js.publish(subject, report(1, Date.now() - 1_000));

    const selector = `{node="${node.id}"}`;
    const memory = await waitFor(
      "series in Mimir",
      async () => {
        const result = await query(org.id, `edgefleet_node_memory_used_bytes${selector}`);
        return result.length > 0 ? result : undefined;
      },
      20_000,
    );
    expect(memory[0]?.metric).toMatchObject({ org: org.id, node: node.id });
    expect(memory[0]?.value[1]).toBe("1000000");
    expect((await query(org.id, `edgefleet_node_cpu_usage_ratio${selector}`))[0]?.value[1]).toBe("0.25");
    expect((await query(org.id, `edgefleet_node_rtt_seconds${selector}`))[0]?.value[1]).toBe("0.012");
    const network = await query(org.id, `edgefleet_node_network_receive_bytes_total${selector}`);
    expect(network[0]?.metric.interface).toBe("eth0");
    const app = await query(org.id, `edgefleet_app_cpu_usage_ratio${selector}`);
    expect(app[0]?.metric).toMatchObject({ app: "web", version: "1.0" });
    const restarts = await query(org.id, `edgefleet_app_restarts_total${selector}`);
    expect(restarts[0]?.metric).toMatchObject({ app: "web", version: "1.0" });
    expect(restarts[0]?.value[1]).toBe("4");
    const control = await query(org.id, `edgefleet_node_control_bytes_total${selector}`);
    // hb sent, hello sent and received: a direction never used has no series.
    expect(control).toHaveLength(3);
    // The series budget: 6 host + 2 per interface + 3 per app + control directions used.
    expect((await query(org.id, `count({__name__=~"edgefleet_.+", node="${node.id}"})`))[0]?.value[1]).toBe(
      "14",
    );

    expect(await query(other.id, `{__name__=~"edgefleet_.+", node="${node.id}"}`)).toEqual([]);
    expect((await harness.db.node.findUniqueOrThrow({ where: { id: node.id } })).metricsSeq).toBe(1n);
  });

  it("creates per-app series only for desired apps and caps interfaces, so one node cannot exhaust its organization's series (issue 8, #5)", async () => {
    const node = await nodeWithWeb("mx-budget");
    const subject = platformUpSubject(node.org, node.address, "mx");
    const before = await rejected("mx", "series_budget");
    const base = decodeMessage("metricsReport", report(1, 0));
    if (!base.ok) throw new Error("fixture");
    // 64 made-up apps per report and 4 fresh interface names per report, 3 reports.
    for (let seq = 1; seq <= 3; seq++) {
      await js.publish(
        subject,
        encodeMessage("metricsReport", {
          ...base.msg,
          seq,
          at: Date.now() - 5_000 + seq * 1_000,
          net: [0, 1, 2, 3].map((i) => ({ if: `fake${seq}${i}`, rx: 1, tx: 1 })),
          apps: [
            { app: "web", cpu: 1, mem: 1 },
            ...Array.from({ length: 63 }, (_, i) => ({ app: `made-up-${seq}-${i}`, cpu: 1, mem: 1 })),
          ],
        }),
      );
    }
    await waitForCount("mx", "series_budget", before + 3);
    await waitFor("seq 3 stored", async () =>
      (await harness.db.node.findUniqueOrThrow({ where: { id: node.id } })).metricsSeq === 3n
        ? true
        : undefined,
    );
    const apps = await waitFor("web's series", async () => {
      const result = await query(org.id, `edgefleet_app_memory_bytes{node="${node.id}"}`);
      return result.length > 0 ? result : undefined;
    });
    expect(apps.map((series) => series.metric.app)).toEqual(["web"]);
    const interfaces = await query(org.id, `edgefleet_node_network_receive_bytes_total{node="${node.id}"}`);
    expect(interfaces.length).toBeLessThanOrEqual(4);
    // 6 host + 2 × ≤4 interfaces + 3 for web + 3 control directions: never 64 apps' worth.
    const total = Number(
      (await query(org.id, `count({__name__=~"edgefleet_.+", node="${node.id}"})`))[0]?.value[1],
    );
    expect(total).toBeLessThanOrEqual(6 + 8 + 3 + 3);
  });

  it("writes a report that came after a newer one once, and drops repeats (two replicas, redeliveries)", async () => {
    const node = await nodeWithWeb("mx-2");
    const subject = platformUpSubject(node.org, node.address, "mx");
    const now = Date.now();
    await js.publish(subject, report(1, now - 3_000));
    await js.publish(subject, report(3, now - 1_000));
    await waitFor("seq 3 stored", async () =>
      (await harness.db.node.findUniqueOrThrow({ where: { id: node.id } })).metricsSeq === 3n
        ? true
        : undefined,
    );
    // Seq 2 arrives last, as when another gateway replica held it or it was redelivered.
    await js.publish(subject, report(2, now - 2_000));
    const samples = `count_over_time(edgefleet_node_cpu_usage_ratio{node="${node.id}"}[10m])`;
    await waitFor("three samples in Mimir", async () =>
      (await query(org.id, samples))[0]?.value[1] === "3" ? true : undefined,
    );
    const duplicates = await rejected("mx", "duplicate");
    await js.publish(subject, report(2, now - 2_000));
    await js.publish(subject, report(3, now - 1_000));
    await waitForCount("mx", "duplicate", duplicates + 2);
    expect((await query(org.id, samples))[0]?.value[1]).toBe("3");
    expect(await harness.db.node.findUniqueOrThrow({ where: { id: node.id } })).toMatchObject({
      metricsSeq: 3n,
      metricsSeen: 3n,
    });
  });

  it("rejects a metrics report older than the node's window", async () => {
    const node = await nodeWithWeb("mx-3");
    const subject = platformUpSubject(node.org, node.address, "mx");
    await js.publish(subject, report(100, Date.now() - 1_000));
    await waitFor("seq 100 stored", async () =>
      (await harness.db.node.findUniqueOrThrow({ where: { id: node.id } })).metricsSeq === 100n
        ? true
        : undefined,
    );
    const before = await rejected("mx", "too_old");
    await js.publish(subject, report(36, Date.now() - 2_000));
    await waitForCount("mx", "too_old", before + 1);
    expect((await harness.db.node.findUniqueOrThrow({ where: { id: node.id } })).metricsSeq).toBe(100n);
  });
});
