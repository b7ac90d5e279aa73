import type { Db } from "@edgefleet/db";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FairShare, handleRestRequest, REST_BASE_PATH } from "../src";
import { apiKeysByRole, ORG, OTHER_ORG } from "./actors";
import { sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

// Tenant fairness (issue 8, #15): rate limits per API key and organization with 429 and
// Retry-After, and a free slot going to the next organization in turn, not to the busiest.

describe("FairShare bookkeeping", () => {
  const options = (now: () => number) => ({
    concurrency: 2,
    maxQueuePerOrg: 100,
    organization: { ratePerSecond: 1000, burst: 1000 },
    apiKey: { ratePerSecond: 2, burst: 3 },
    now,
  });

  it("hands freed slots to organizations in turn: one org's 50 queued calls do not delay another's one", async () => {
    // No cap (an organization may take every slot): the turns alone keep B's wait short.
    const share = new FairShare({ ...options(() => 0), maxPerOrganization: 2 });
    const order: string[] = [];
    const running: Array<() => void> = [];
    const call = (org: string, label: string) =>
      share.admit(org, null).then((release) => {
        order.push(label);
        running.push(release);
      });
    // Org A fills both slots and queues 50 more; then org B asks once.
    const a = Array.from({ length: 52 }, (_, i) => call("A", `A${i}`));
    const b = call("B", "B0");
    await Promise.resolve();
    expect(share.stats()).toEqual({ running: 2, runningByOrganization: { A: 2 }, waiting: { A: 50, B: 1 } });
    // Finish one call at a time: B's call is the second to start, not the 51st.
    for (let i = 0; i < 6; i++) {
      running.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(order.slice(0, 4)).toEqual(["A0", "A1", "A2", "B0"]);
    while (running.length > 0) {
      running.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all([...a, b]);
    expect(share.stats()).toEqual({ running: 0, runningByOrganization: {}, waiting: {} });
  });

  it("caps one organization at half the slots by default, so another's call starts at once", async () => {
    const share = new FairShare({ ...options(() => 0), concurrency: 4 });
    const releases: Array<() => void> = [];
    const started: string[] = [];
    const call = (org: string, label: string) =>
      share.admit(org, null).then((release) => {
        started.push(label);
        releases.push(release);
      });
    const burst = Array.from({ length: 30 }, (_, i) => call("A", `A${i}`));
    await new Promise((resolve) => setImmediate(resolve));
    // A holds its 2 of 4 slots; two stay free although 28 of A's calls wait.
    expect(share.stats()).toMatchObject({ running: 2, runningByOrganization: { A: 2 }, waiting: { A: 28 } });
    const b = call("B", "B0");
    await new Promise((resolve) => setImmediate(resolve));
    // B's call started without waiting for any of A's to finish.
    expect(started).toEqual(["A0", "A1", "B0"]);
    while (releases.length > 0) {
      releases.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all([...burst, b]);
    expect(started).toHaveLength(31);
    expect(share.stats()).toEqual({ running: 0, runningByOrganization: {}, waiting: {} });
  });

  it("keeps its bounds under any interleaving of calls and releases (property)", async () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant("call" as const), org: fc.constantFrom("A", "B", "C") }),
      fc.record({ kind: fc.constant("release" as const), index: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(step, { maxLength: 60 }),
        async (concurrency, cap, steps) => {
          const maxPerOrganization = Math.min(cap, concurrency);
          const share = new FairShare({ ...options(() => 0), concurrency, maxPerOrganization });
          const running: Array<{ org: string; release: () => void }> = [];
          const pending: Array<Promise<void>> = [];
          const check = () => {
            const stats = share.stats();
            expect(stats.running).toBe(running.length);
            expect(stats.running).toBeLessThanOrEqual(concurrency);
            for (const held of Object.values(stats.runningByOrganization))
              expect(held).toBeLessThanOrEqual(maxPerOrganization);
            // Work-conserving up to the caps: nothing waits while its organization could start.
            for (const [org, waiting] of Object.entries(stats.waiting))
              if (waiting > 0)
                expect(
                  stats.running === concurrency ||
                    (stats.runningByOrganization[org] ?? 0) === maxPerOrganization,
                ).toBe(true);
          };
          for (const s of steps) {
            if (s.kind === "call") {
              pending.push(
                share.admit(s.org, null).then((release) => {
                  running.push({ org: s.org, release });
                }),
              );
            } else if (running.length > 0) {
              running.splice(s.index % running.length, 1)[0]?.release();
            }
            await new Promise((resolve) => setImmediate(resolve));
            check();
          }
          while (running.length > 0) {
            running.shift()?.release();
            await new Promise((resolve) => setImmediate(resolve));
            check();
          }
          await Promise.all(pending);
          expect(share.stats()).toEqual({ running: 0, runningByOrganization: {}, waiting: {} });
        },
      ),
      { numRuns: 200 },
    );
  });

  it("refuses past an API key's rate with when to retry, and refills", async () => {
    let now = 0;
    const share = new FairShare(options(() => now));
    for (let i = 0; i < 3; i++) (await share.admit("A", "key-1"))();
    await expect(share.admit("A", "key-1")).rejects.toMatchObject({ scope: "apiKey", retryAfterSeconds: 1 });
    // Another key of the same organization is not affected.
    (await share.admit("A", "key-2"))();
    now += 500;
    (await share.admit("A", "key-1"))();
  });

  it("bounds one organization's queue", async () => {
    const share = new FairShare({ ...options(() => 0), concurrency: 1, maxQueuePerOrg: 2 });
    const first = await share.admit("A", null);
    const queued = [share.admit("A", null), share.admit("A", null)];
    await expect(share.admit("A", null)).rejects.toMatchObject({ scope: "queue" });
    first();
    for (const next of queued) (await next)();
  });
});

describe("REST with fair share", () => {
  let testDb: TestDatabase;
  let db: Db;
  let acmeKey: string;
  let globexKey: string;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    db = testDb.db;
    acmeKey = (await apiKeysByRole(db, await sessionOf(db, "alice@acme.example"), ORG)).viewer;
    globexKey = (await apiKeysByRole(db, await sessionOf(db, "bob@globex.example"), OTHER_ORG)).viewer;
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it("answers 429 with Retry-After past the key's rate, while another organization is served", async () => {
    const fairShare = new FairShare({
      concurrency: 4,
      maxQueuePerOrg: 50,
      organization: { ratePerSecond: 1000, burst: 1000 },
      // Slow refill, so a slow machine's burst cannot earn a sixth token meanwhile.
      apiKey: { ratePerSecond: 0.05, burst: 5 },
    });
    const get = (key: string) =>
      handleRestRequest(
        new Request(`http://edgefleet.test${REST_BASE_PATH}/sites`, {
          headers: { authorization: `Bearer ${key}` },
        }),
        { db, fairShare },
      );
    const burst = await Promise.all(Array.from({ length: 8 }, () => get(acmeKey)));
    const statuses = burst.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    const limited = burst.filter((response) => response.status === 429);
    expect(limited).toHaveLength(3);
    expect(Number(limited[0]?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await limited[0]?.json()).toMatchObject({ code: "TOO_MANY_REQUESTS" });
    expect((await get(globexKey)).status).toBe(200);
  });
});
