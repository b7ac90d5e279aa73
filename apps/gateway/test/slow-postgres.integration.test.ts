import { Writable } from "node:stream";
import { DEFAULT_TIMINGS } from "@edgefleet/alerts";
import { createPrismaClient, type Db } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { waitFor } from "@edgefleet/nats-tenancy/testing";
import pg from "pg";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAlertingMetrics } from "../src/alerts/alerting-metrics.js";
import { AlertingReconciler } from "../src/alerts/alerting-reconciler.js";
import { AdvisoryLeader } from "../src/alerts/leader.js";
import { MimirAlerting } from "../src/alerts/mimir-alerting.js";
import { backgroundFailures } from "../src/metrics.js";
import { requireTestEnv } from "./support/required-env.js";

// A slow Postgres must degrade the gateway, never end it. During a 1,000-node benchmark the
// gateway exited on "unhandled promise rejection": a query in a timer-driven loop (the alerting
// reconciler's tick, started with `void`) failed outside any try, and main.ts exits on an
// unhandled rejection. Here Postgres is made slow for real: another session holds an ACCESS
// EXCLUSIVE lock on alerting_state, and the gateway's pool gives up on statements after 300 ms.

const MIMIR_URL = requireTestEnv("MIMIR_URL");
const STATEMENT_TIMEOUT_MS = 300;

let database: TestDatabase;
let slowDb: Db;
let locker: pg.Client;
const unhandled: unknown[] = [];
const recordUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  database = await createMigratedDatabase();
  slowDb = createPrismaClient(database.url, {
    pool: { max: 2, statement_timeout: STATEMENT_TIMEOUT_MS, connectionTimeoutMillis: 1_000 },
    log: [],
  });
  locker = new pg.Client({ connectionString: database.url });
  await locker.connect();
  process.on("unhandledRejection", recordUnhandled);
});

afterAll(async () => {
  process.off("unhandledRejection", recordUnhandled);
  await locker?.end();
  await slowDb?.$disconnect();
  await database?.drop();
});

function capturingLogger() {
  const lines: Array<{ msg: string; task?: string; level: number }> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: "info" }, sink), lines };
}

async function failuresOf(task: string): Promise<number> {
  const { values } = await backgroundFailures.get();
  return values.find((value) => value.labels.task === task)?.value ?? 0;
}

describe("a slow Postgres", () => {
  it("makes the alerting reconciler's tick fail, logged and counted, and the next tick recovers", async () => {
    const registry = new Registry();
    const metrics = createAlertingMetrics(registry);
    const { logger, lines } = capturingLogger();
    const leader = new AdvisoryLeader(database.url, 0x51_0e);
    const reconciler = new AlertingReconciler(
      slowDb,
      new MimirAlerting(MIMIR_URL),
      leader,
      {
        relayUrl: "http://127.0.0.1:1",
        relaySecret: "relay-secret-of-the-slow-postgres-test-0123",
        consoleUrl: "http://127.0.0.1:1",
        evaluationInterval: "15s",
        timings: DEFAULT_TIMINGS,
        syncMs: 60_000,
        driftCheckMs: 60_000,
      },
      metrics,
      logger,
    );
    const before = await failuresOf("alerting-reconciler");
    metrics.outOfSync.set(-1);

    await locker.query("BEGIN");
    await locker.query("LOCK TABLE alerting_state IN ACCESS EXCLUSIVE MODE");
    try {
      // start() ticks at once, unawaited: exactly the path that crashed.
      reconciler.start();
      await waitFor(
        "the failed tick to be counted",
        async () =>
          unhandled.length > 0 || (await failuresOf("alerting-reconciler")) > before ? true : undefined,
        5_000,
      );
      // Give a rejection that escaped the chance to surface (it does so on the next turns).
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(unhandled).toEqual([]);
      expect(lines.some((line) => line.task === "alerting-reconciler" && line.level >= 50)).toBe(true);
    } finally {
      await locker.query("ROLLBACK");
    }

    // Postgres answers again: the next tick does the work (the out-of-sync gauge is written).
    await reconciler.tick();
    expect((await metrics.outOfSync.get()).values[0]?.value).toBe(0);
    await reconciler.stop();
    await leader.release();
    expect(unhandled).toEqual([]);
  });
});
