/**
 * metrics.slo against a real Mimir: the per-organization histograms the web server and the
 * gateway push (OrgHistograms + remote write) come back as p99s next to their objectives, per tenant.
 */
import {
  API_LATENCY_SERIES,
  CONNECT_TO_ONLINE_SERIES,
  OrgHistograms,
  SLO_OBJECTIVES,
} from "@edgefleet/alerts";
import type { Db } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiSession, createCaller, createTRPCContext, startHistogramPusher } from "../src";
import { sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

const MIMIR_URL = process.env.MIMIR_URL;
if (!MIMIR_URL) throw new Error("MIMIR_URL must point at the test stack's Mimir");
const mimirUrl = MIMIR_URL;

let testDb: TestDatabase;
let db: Db;
let alice: ApiSession;
let bob: ApiSession;
let acmeId: string;
const apiLatency = new OrgHistograms(API_LATENCY_SERIES);
const connectToOnline = new OrgHistograms(CONNECT_TO_ONLINE_SERIES);

const callerFor = (session: ApiSession, slug: string) =>
  createCaller(createTRPCContext({ db, session, activeOrganizationSlug: slug, mimirUrl, apiLatency }));

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  alice = await sessionOf(db, "alice@acme.example");
  bob = await sessionOf(db, "bob@globex.example");
  acmeId = (await db.organization.findUniqueOrThrow({ where: { slug: "acme" } })).id;
});

afterAll(async () => {
  await testDb?.drop();
});

describe("metrics.slo", () => {
  it("records each organization's call latencies and reads back its p99 next to the objective", async () => {
    // Calls through the real procedure chain: the middleware times them under acme's id.
    for (let i = 0; i < 5; i++) await callerFor(alice, "acme").node.counts();
    expect(apiLatency.organizations()).toEqual([acmeId]);
    // A slow call and a connect, so the p99 is known: 99 % of 100 calls ≤ 2 s bucket.
    for (let i = 0; i < 95; i++) apiLatency.observe(acmeId, 0.004, { kind: "query" });
    apiLatency.observe(acmeId, 1.5, { kind: "query" });
    connectToOnline.observe(acmeId, 0.2);

    // Two pushes 15 s apart: a rate needs two samples. The first carries zero counts.
    const empty = new OrgHistograms(API_LATENCY_SERIES);
    empty.observe(acmeId, 0, { kind: "warmup" });
    const first = startHistogramPusher(empty, mimirUrl, 3_600_000);
    await first.flush();
    first.stop();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    for (const histograms of [apiLatency, connectToOnline]) {
      const pusher = startHistogramPusher(histograms, mimirUrl, 3_600_000);
      await pusher.flush();
      pusher.stop();
    }
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    for (const histograms of [apiLatency, connectToOnline]) {
      const pusher = startHistogramPusher(histograms, mimirUrl, 3_600_000);
      await pusher.flush();
      pusher.stop();
    }

    const slo = await callerFor(alice, "acme").metrics.slo({ window: "1h" });
    const api = slo.indicators.find((indicator) => indicator.key === "apiP99");
    expect(api?.objective).toBe(SLO_OBJECTIVES.apiP99Seconds);
    expect(api?.value).not.toBeNull();
    expect(api?.value ?? 0).toBeGreaterThan(0);
    expect(api?.events ?? 0).toBeGreaterThan(0);
    expect(api?.met).toBe((api?.value ?? 0) <= 1);
    const connect = slo.indicators.find((indicator) => indicator.key === "connectToOnlineP99");
    expect(connect?.value ?? 0).toBeGreaterThan(0);
    expect(connect?.met).toBe(true);
  }, 60_000);

  it("shows another organization none of it", async () => {
    const slo = await callerFor(bob, "globex").metrics.slo({ window: "1h" });
    const api = slo.indicators.find((indicator) => indicator.key === "apiP99");
    expect(api?.value).toBeNull();
    expect(api?.met).toBeNull();
    await expect(callerFor(bob, "acme").metrics.slo({ window: "1h" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });

  it("refuses a window outside the list, naming the field", async () => {
    await expect(
      // @ts-expect-error: not one of the windows
      callerFor(alice, "acme").metrics.slo({ window: "2h" }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("window") });
  });
});
