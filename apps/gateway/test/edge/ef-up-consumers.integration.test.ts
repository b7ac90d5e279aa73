import { EF_UP_STREAM } from "@edgefleet/agent-sdk/protocol";
import { AckPolicy, jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureGatewayConsumers, GATEWAY_CONSUMERS } from "../../src/edge/ingest/ef-up-stream.js";
import { type EdgeHarness, startEdgeHarness } from "../support/edge-harness.js";

let harness: EdgeHarness;

beforeAll(async () => {
  harness = await startEdgeHarness();
});
afterAll(async () => {
  await harness?.stop();
});

describe("the gateway's EF_UP consumers", () => {
  it("narrows the one consumer of earlier versions to statuses and acks, and adds the metrics one beside it", async () => {
    const jsm = await jetstreamManager(harness.nc, { domain: "hub" });
    // An installation from before the split: one consumer taking every subject of the work queue.
    for (const { name } of GATEWAY_CONSUMERS)
      await jsm.consumers.delete(EF_UP_STREAM, name).catch(() => false);
    await jsm.consumers.add(EF_UP_STREAM, { durable_name: "gateway", ack_policy: AckPolicy.Explicit });
    // A work queue refuses a second consumer over the same subjects: the split must narrow first.
    await expect(
      jsm.consumers.add(EF_UP_STREAM, {
        durable_name: "gateway-metrics",
        ack_policy: AckPolicy.Explicit,
        filter_subjects: ["ef.t.*.up.*.*.mx"],
      }),
    ).rejects.toThrow();

    await ensureGatewayConsumers(jsm);
    await ensureGatewayConsumers(jsm); // again, as every replica's start does: nothing changes
    const filters = await Promise.all(
      GATEWAY_CONSUMERS.map(
        async ({ name }) => (await jsm.consumers.info(EF_UP_STREAM, name)).config.filter_subjects,
      ),
    );
    expect(filters).toEqual([
      ["ef.t.*.up.*.*.st", "ef.t.*.up.*.st", "ef.t.*.up.*.*.ack", "ef.t.*.up.*.ack"],
      ["ef.t.*.up.*.*.mx", "ef.t.*.up.*.mx"],
    ]);
  });
});
