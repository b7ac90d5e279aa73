import { describe, expect, it } from "vitest";
import { accountDeliveries, sumAccounts } from "../src/ha/accounting.js";
import { failuresSeen, healedAfter, normalLevels, recoveryAfter } from "../src/ha/recovery.js";
import type { TimelineSample } from "../src/ha/results.js";

const facts = (input: {
  applied?: Record<string, number[]>;
  final?: Record<string, number>;
  samples?: Record<string, number[]>;
}) => ({
  statusApplied: new Map(Object.entries(input.applied ?? {})),
  finalStatusSeq: new Map(Object.entries(input.final ?? {})),
  mimirSamples: new Map(Object.entries(input.samples ?? {})),
});

describe("exactly-once accounting", () => {
  it("counts every acknowledged report as applied, superseded or lost", () => {
    const account = accountDeliveries(
      [
        {
          nid: "a",
          st: [
            [1, 10],
            [2, 20],
            [3, 30],
            [4, 40],
          ],
          mx: [],
          evicted: 0,
          pending: 0,
        },
        {
          nid: "b",
          st: [
            [1, 10],
            [2, 20],
          ],
          mx: [],
          evicted: 1,
          pending: 2,
        },
      ],
      facts({
        // a: 2 arrived after 3 (redelivered) and was dropped as older; 4 never made it.
        applied: { a: [1, 3], b: [1, 2, 2] },
        final: { a: 3, b: 2 },
      }),
    );
    expect(account.status).toEqual({
      acked: 6,
      applied: 4,
      superseded: 1,
      lost: 1,
      appliedTwice: 1,
      appliedUnacked: 0,
    });
    expect(account.evicted).toBe(1);
    expect(account.pending).toBe(2);
    expect(account.examples.sort()).toEqual(["a", "b"]);
  });

  it("counts only the reports made within a window when given one", () => {
    const deliveries = [
      {
        nid: "a",
        st: [
          [1, 10],
          [2, 20],
          [3, 30],
        ] as Array<[number, number]>,
        mx: [
          [1, 10],
          [2, 20],
        ] as Array<[number, number]>,
        evicted: 0,
        pending: 0,
      },
    ];
    const inventory = facts({ applied: { a: [1, 3, 3] }, final: { a: 3 }, samples: { a: [10] } });
    const window = accountDeliveries(deliveries, inventory, { from: 15, to: 25 });
    expect(window.status).toMatchObject({ acked: 1, applied: 0, superseded: 1, lost: 0, appliedTwice: 0 });
    expect(window.metrics).toMatchObject({ acked: 1, inMimir: 0, lost: 1 });
    expect(accountDeliveries(deliveries, inventory).status.appliedTwice).toBe(1);
  });

  it("finds each acknowledged metrics report's sample in Mimir by its timestamp", () => {
    const account = accountDeliveries(
      [
        {
          nid: "a",
          st: [],
          mx: [
            [1, 1000],
            [2, 2000],
            [3, 3000],
          ],
          evicted: 0,
          pending: 0,
        },
      ],
      facts({ samples: { a: [1000, 3000, 3000, 4000] } }),
    );
    expect(account.metrics).toEqual({ acked: 3, inMimir: 2, lost: 1, duplicated: 1, unacked: 1 });
  });

  it("adds the sites' accounts up", () => {
    const one = accountDeliveries(
      [{ nid: "a", st: [[1, 10]], mx: [[1, 10]], evicted: 0, pending: 0 }],
      facts({ applied: { a: [1] }, final: { a: 1 }, samples: { a: [10] } }),
    );
    const total = sumAccounts([one, one]);
    expect(total.nodes).toBe(2);
    expect(total.status.applied).toBe(2);
    expect(total.metrics.inMimir).toBe(2);
  });
});

const sample = (at: number, overrides: Partial<TimelineSample> = {}): TimelineSample => ({
  at,
  gateways: [200, 200],
  consoles: [200, 200],
  nodeCommands: [200, 200],
  session: 200,
  keycloak: 200,
  ingestBacklog: 0,
  agentBacklog: [0, 0],
  agentsConnected: [30, 30],
  controllerLeasing: true,
  running: 0,
  online: 60,
  loadAverage: 1,
  ...overrides,
});

describe("recovery after a kill", () => {
  it("is the first healthy sample after the last unhealthy one", () => {
    const window = [
      sample(1_000, { gateways: [null, 200] }),
      sample(2_000),
      sample(3_000, { gateways: [503, 200] }),
      sample(4_000),
      sample(5_000),
    ];
    expect(healedAfter(window, 1_000, (s) => s.gateways.every((g) => g === 200))).toBe(3);
    expect(healedAfter(window, 1_000, () => true)).toBe(0);
    expect(healedAfter(window, 1_000, (s) => s.at < 5_000)).toBeNull();
  });

  it("takes the slowest signal as the overall time, the controller only while a rollout runs", () => {
    const window = [
      sample(10_000, { consoles: [500, 500], controllerLeasing: false, agentBacklog: [12, 40] }),
      sample(11_000, { consoles: [500, 500], controllerLeasing: false }),
      sample(12_000, { controllerLeasing: false }),
      sample(13_000),
    ];
    const normal = normalLevels([sample(0, { agentBacklog: [2, 0] })]);
    expect(normal.agentBacklog).toBe(3);
    const during = recoveryAfter({ window, at: 10_000, readyAt: 10_500, normal, rolloutActive: true });
    expect(during).toMatchObject({ serverReady: 0.5, consoleApi: 2, agentsDelivering: 1, controller: 3 });
    expect(during.overall).toBe(3);
    const idle = recoveryAfter({ window, at: 10_000, readyAt: 10_500, normal, rolloutActive: false });
    expect(idle.controller).toBeNull();
    expect(idle.overall).toBe(2);
  });

  it("counts what users saw by probe and answer", () => {
    const seen = failuresSeen([
      sample(1, { consoles: [500, 200], keycloak: null }),
      sample(2, { consoles: [500, 503] }),
    ]);
    expect(seen).toEqual({
      "console-1 REST API": { "HTTP 500": 2 },
      "console-2 REST API": { "HTTP 503": 1 },
      "Keycloak (sign-in)": { "no answer": 1 },
    });
  });
});
