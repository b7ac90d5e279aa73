import { randomUUID } from "node:crypto";
import { platformUpSubject } from "@edgefleet/agent-sdk/protocol";
import { setDesiredApps } from "@edgefleet/db";
import { waitFor } from "@edgefleet/nats-tenancy/testing";
import { encode } from "@msgpack/msgpack";
import { type JetStreamClient, jetstream } from "@nats-io/jetstream";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EdgeHarness, startEdgeHarness, type TestNode } from "../support/edge-harness.js";
import { metricsReportBody } from "../support/up-messages.js";

// The gateway's EF_UP ingest fuzzed with property-generated reports (issue 8, #16): valid
// reports with fields replaced by hostile values, for status, metrics and acks. Whatever
// arrives, every message is settled once (stored, or terminated and counted), none is
// redelivered, and the gateway logs no handling failure.

let harness: EdgeHarness;
let js: JetStreamClient;
let node: TestNode;

beforeAll(async () => {
  harness = await startEdgeHarness();
  js = jetstream(harness.nc, { domain: "hub" });
  const org = await harness.createOrganization(`fuzz-${randomUUID().slice(0, 8)}`);
  const app = await harness.db.app.create({ data: { organizationId: org.id, name: "web" } });
  const version = await harness.db.appVersion.create({
    data: { organizationId: org.id, appId: app.id, version: "1.0", artifactUrl: "https://a.test/1" },
  });
  node = await harness.createNode(org, "fuzzed");
  await setDesiredApps(harness.db, org.id, node.id, { put: [version.id] });
});
afterAll(async () => {
  await harness?.stop();
});

const hostile = fc.oneof(
  fc.constantFrom("\u0000", "a\u0000", "'; DROP TABLE node; --", "x".repeat(300), "", "web"),
  fc.constantFrom(2 ** 31, 2 ** 53, -1, 0, 1.5, Number.MAX_SAFE_INTEGER),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }),
  fc.uint8Array({ maxLength: 8 }),
);

const status = (seq: number) => ({
  v: 1,
  seq,
  at: Date.now(),
  inst: [{ app: "web", ver: "1.0", st: "running", rs: 0 } as Record<string, unknown>],
});
const metrics = (seq: number): Record<string, unknown> => ({
  ...metricsReportBody(seq, { net: [{ if: "eth0", rx: 1, tx: 1 }], apps: [{ app: "web", cpu: 1, mem: 1 }] }),
});

describe("EF_UP ingest under property-based fuzzing", () => {
  it("settles every hostile report exactly once: no redelivery, no handling failure", async () => {
    const cases = fc.sample(
      fc.record({
        type: fc.constantFrom("st", "mx", "ack"),
        seq: fc.integer({ min: 1, max: 10_000 }),
        field: fc.constantFrom(
          "v",
          "seq",
          "at",
          "inst",
          "cpu",
          "net",
          "apps",
          "rev",
          "app",
          "ver",
          "st",
          "rs",
          "why",
        ),
        value: hostile,
      }),
      { numRuns: 150, seed: 20261125 },
    );
    for (const { type, seq, field, value } of cases) {
      let message: Record<string, unknown>;
      if (type === "ack") message = { v: 1, rev: 1 };
      else if (type === "mx") message = metrics(seq);
      else message = status(seq);
      if (type === "st" && ["app", "ver", "st", "rs", "why"].includes(field)) {
        (message.inst as Array<Record<string, unknown>>)[0] = { ...status(seq).inst[0], [field]: value };
      } else {
        message[field] = value;
      }
      await js.publish(platformUpSubject(node.org, node.address, type), encode(message));
    }
    await waitFor(
      "EF_UP drained",
      async () => {
        const info = await (await js.consumers.get("EF_UP", "gateway")).info();
        return info.num_pending === 0 && info.num_ack_pending === 0 ? info : undefined;
      },
      60_000,
    );
    const info = await (await js.consumers.get("EF_UP", "gateway")).info();
    expect(info.num_redelivered).toBe(0);
    const failures = harness.logs.filter(
      (line) => typeof line.msg === "string" && /handling failed|batch failed/.test(line.msg),
    );
    expect(failures).toEqual([]);
    // The node is as sane as before: its stored instance has a known state.
    const instance = await harness.db.appInstance.findFirstOrThrow({ where: { nodeId: node.id } });
    expect(["pending", "running", "starting", "failed", "stopped", "pulling"]).toContain(instance.state);
  }, 120_000);
});
