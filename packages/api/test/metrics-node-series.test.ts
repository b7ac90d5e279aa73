/** metrics.nodeSeries against a real Mimir: samples written by remote write come back per tenant. */
import type { Db } from "@edgefleet/db";
import { pushTimeseries } from "prometheus-remote-write";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession } from "../src";
import { queryRange } from "../src/domain/metrics";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

const MIMIR_URL = process.env.MIMIR_URL;
if (!MIMIR_URL) throw new Error("MIMIR_URL must point at the test stack's Mimir");

interface Series {
  labels: { __name__: string; [label: string]: string };
  samples: Array<{ value: number; timestamp: number }>;
}

/** Remote write as the gateway does it (apps/gateway/src/edge/ingest/mimir-writer.ts). */
async function write(tenant: string, series: Series[]): Promise<void> {
  const result = await pushTimeseries(series, {
    url: new URL("/api/v1/push", MIMIR_URL).toString(),
    headers: { "X-Scope-OrgID": tenant },
    // without it the library loads node-fetch, which is not installed
    fetch: (url, init) =>
      fetch(url, {
        method: init?.method ?? "POST",
        headers: init?.headers,
        body: init?.body as unknown as Uint8Array,
      }),
  });
  if (result.status !== 200) throw new Error(`remote write: ${result.status} ${result.errorMessage}`);
}

const STEP = 30;
const POINTS = 20;
// Whole seconds, in the recent past (Mimir accepts these into its head block).
const start = Math.floor(Date.now() / 1000 - POINTS * STEP - 60) * 1000;
const times = Array.from({ length: POINTS }, (_, i) => start + i * STEP * 1000);

let testDb: TestDatabase;
let db: Db;
let alice: ApiSession;
let bob: ApiSession;
let acmeId: string;
let globexId: string;
let nodeId: string;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  alice = await sessionOf(db, "alice@acme.example");
  bob = await sessionOf(db, "bob@globex.example");
  acmeId = (await db.organization.findUniqueOrThrow({ where: { slug: "acme" } })).id;
  globexId = (await db.organization.findUniqueOrThrow({ where: { slug: "globex" } })).id;
  nodeId = (await db.node.findFirstOrThrow({ where: { organizationId: acmeId } })).id;

  const base = { org: acmeId, node: nodeId };
  const series = (
    name: string,
    value: (i: number) => number,
    labels: Record<string, string> = {},
  ): Series => ({
    labels: { __name__: name, ...base, ...labels },
    samples: times.map((timestamp, i) => ({ timestamp, value: value(i) })),
  });
  await write(acmeId, [
    series("edgefleet_node_cpu_usage_ratio", (i) => i / 100),
    series("edgefleet_node_memory_used_bytes", () => 512e6),
    series("edgefleet_node_memory_total_bytes", () => 1024e6),
    series("edgefleet_node_disk_used_bytes", () => 10e9),
    series("edgefleet_node_disk_total_bytes", () => 32e9),
    series("edgefleet_node_rtt_seconds", () => 0.042),
    // 3000 bytes per 30 s = 100 B/s received; 60 B/s sent
    series("edgefleet_node_network_receive_bytes_total", (i) => i * 3000, { interface: "eth0" }),
    series("edgefleet_node_network_transmit_bytes_total", (i) => i * 1800, { interface: "eth0" }),
    series("edgefleet_node_control_bytes_total", (i) => i * 300, { type: "hb", direction: "sent" }),
  ]);
  // The same labels under another tenant: must never show up for acme.
  await write(globexId, [series("edgefleet_node_cpu_usage_ratio", () => 0.99)]);
});

afterAll(async () => {
  await testDb?.drop();
});

const range = () => ({ from: new Date(times[0] as number), to: new Date(times.at(-1) as number) });

describe("metrics.nodeSeries", () => {
  it("returns every chart of the node from the caller's tenant", async () => {
    const result = await callerFor(db, alice, "acme").metrics.nodeSeries({
      nodeId,
      range: range(),
      step: STEP,
    });
    expect(result.step).toBe(STEP);
    const cpu = result.charts.cpu;
    expect(cpu).toHaveLength(1);
    expect(cpu?.[0]?.points).toEqual(times.map((t, i) => [t, i / 100]));
    expect(result.charts.memoryUsed?.[0]?.points[0]).toEqual([times[0], 512e6]);
    expect(result.charts.memoryTotal?.[0]?.points[0]?.[1]).toBe(1024e6);
    expect(result.charts.diskUsed?.[0]?.points[0]?.[1]).toBe(10e9);
    expect(result.charts.diskTotal?.[0]?.points[0]?.[1]).toBe(32e9);
    expect(result.charts.rtt?.[0]?.points[0]?.[1]).toBe(0.042);
  });

  it("turns counters into per-second rates per interface and per message type", async () => {
    const result = await callerFor(db, alice, "acme").metrics.nodeSeries({
      nodeId,
      range: range(),
      step: STEP,
    });
    const [rx] = result.charts.networkReceive ?? [];
    const [tx] = result.charts.networkTransmit ?? [];
    const [ctl] = result.charts.controlBytes ?? [];
    expect(rx?.labels).toEqual({ interface: "eth0" });
    expect(ctl?.labels).toEqual({ type: "hb", direction: "sent" });
    const middle = (points: Array<[number, number]> | undefined) => points?.[Math.floor(POINTS / 2)]?.[1];
    expect(middle(rx?.points)).toBeCloseTo(100, 5);
    expect(middle(tx?.points)).toBeCloseTo(60, 5);
    expect(middle(ctl?.points)).toBeCloseTo(10, 5);
  });

  it("reads under the caller's organization only", async () => {
    // Same selector, other tenant: Mimir has the forged 0.99 series there, and acme never sees it.
    const sel = `{node="${nodeId}"}`;
    const asGlobex = await queryRange(
      { url: MIMIR_URL, tenant: globexId },
      `edgefleet_node_cpu_usage_ratio${sel}`,
      {
        ...range(),
        step: STEP,
      },
    );
    expect(asGlobex[0]?.points.every(([, v]) => v === 0.99)).toBe(true);
    await expect(
      callerFor(db, bob, "globex").metrics.nodeSeries({ nodeId, range: range(), step: STEP }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      callerFor(db, bob, "acme").metrics.nodeSeries({ nodeId, range: range(), step: STEP }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("returns empty charts for a node without samples", async () => {
    const quiet = await db.node.findFirstOrThrow({ where: { organizationId: acmeId, id: { not: nodeId } } });
    const result = await callerFor(db, alice, "acme").metrics.nodeSeries({
      nodeId: quiet.id,
      range: range(),
    });
    expect(result.step).toBeGreaterThanOrEqual(15);
    expect(result.charts.cpu).toEqual([]);
  });

  it.each([
    [
      "an inverted range",
      { from: new Date(2_000_000), to: new Date(1_000_000) },
      undefined,
      /range.to must be after/,
    ],
    ["a 40-day range", { from: new Date(0), to: new Date(40 * 86_400_000) }, undefined, /at most 31 days/],
    ["too many points", { from: new Date(0), to: new Date(86_400_000) }, 1, /step too small/],
  ])("rejects %s with BAD_REQUEST", async (_label, badRange, step, message) => {
    const call = callerFor(db, alice, "acme").metrics.nodeSeries({
      nodeId,
      range: badRange,
      ...(step ? { step } : {}),
    });
    await expect(call).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringMatching(message),
    });
  });
});
