import {
  type DesiredDelta,
  decodeMessage,
  encodeMessage,
  type HelloReply,
  platformDownSubject,
  platformUpSubject,
} from "@edgefleet/agent-sdk/protocol";
import { setDesiredApps } from "@edgefleet/db";
import { waitFor } from "@edgefleet/nats-tenancy/testing";
import { encode } from "@msgpack/msgpack";
import { jetstream } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EdgeHarness, startEdgeHarness, type TestNode } from "../support/edge-harness.js";

let harness: EdgeHarness;
let org: { id: string; org: string };
const versions: Record<string, { id: string; appId: string }> = {};

beforeAll(async () => {
  harness = await startEdgeHarness();
  org = await harness.createOrganization("desired-a");
  for (const [app, version] of [
    ["web", "1.0"],
    ["web", "2.0"],
    ["db", "1.0"],
  ] as const) {
    const appRow = await harness.db.app.upsert({
      where: { organizationId_name: { organizationId: org.id, name: app } },
      create: { organizationId: org.id, name: app },
      update: {},
    });
    const row = await harness.db.appVersion.create({
      data: {
        organizationId: org.id,
        appId: appRow.id,
        version,
        artifactUrl: `https://a.test/${app}`,
        runSpec: { command: [`/opt/${app}/bin/run`, version] },
      },
    });
    versions[`${app}@${version}`] = { id: row.id, appId: appRow.id };
  }
});
afterAll(async () => {
  await harness?.stop();
});

const version = (key: string) => {
  const found = versions[key];
  if (!found) throw new Error(key);
  return found;
};

async function hello(node: TestNode, rev: number): Promise<HelloReply> {
  const reply = await harness.nc.request(
    platformUpSubject(node.org, node.address, "hello"),
    encodeMessage("hello", { v: 1, av: "0.1.0", os: "linux", arch: "x64", boot: "boot-1", rev }),
    { timeout: 5_000 },
  );
  const decoded = decodeMessage("helloReply", reply.data);
  if (!decoded.ok) throw new Error(decoded.detail);
  return decoded.msg;
}

function collectDeltas(node: TestNode): DesiredDelta[] {
  const received: DesiredDelta[] = [];
  const subscription = harness.nc.subscribe(platformDownSubject(node.org, node.address));
  void (async () => {
    for await (const msg of subscription) {
      const decoded = decodeMessage("desiredDelta", msg.data);
      if (decoded.ok) received.push(decoded.msg);
    }
  })();
  return received;
}

describe("desired state down", () => {
  it("publishes a delta on ef.t.<org>.down.<wid> when setDesiredApps raises the revision", async () => {
    const node = await harness.createNode(org, "pub-1");
    const received = collectDeltas(node);
    await harness.nc.flush();
    await setDesiredApps(harness.db, org.id, node.id, { put: [version("web@1.0").id] });
    const [delta] = await waitFor("delta", async () => (received.length > 0 ? received : undefined), 5_000);
    expect(delta).toEqual({
      v: 1,
      from: 0,
      to: 1,
      put: [{ app: "web", ver: "1.0", spec: { command: ["/opt/web/bin/run", "1.0"] } }],
      del: [],
    });
    expect(
      await harness.metric("edgefleet_gateway_desired_deltas_total", { via: "publish" }),
    ).toBeGreaterThan(0);
  });

  it("counts a re-list only when a node that had applied a revision gets everything again", async () => {
    const node = await harness.createNode(org, "relist-1");
    await setDesiredApps(harness.db, org.id, node.id, { put: [version("web@1.0").id] });
    const relists = () => harness.metric("edgefleet_gateway_desired_full_lists_total", { via: "hello" });
    const before = await relists();

    // First sync of a new node: everything, but not a re-list.
    expect((await hello(node, 0)).d).toMatchObject({ from: 0, to: 1 });
    expect(await hello(node, 1)).toMatchObject({ d: null });
    expect(await relists()).toBe(before);

    // The node lost its state (reports 0 after applying 1): a re-list.
    expect((await hello(node, 0)).d).toMatchObject({ from: 0, to: 1 });
    expect(await relists()).toBe(before + 1);
    // A revision the control plane never gave it: everything again, another re-list.
    expect(await hello(node, 1)).toMatchObject({ d: null });
    expect((await hello(node, 7)).d).toMatchObject({ from: 0, to: 1 });
    expect(await relists()).toBe(before + 2);
  });

  it("Hello resumes from the agent's revision: only later changes, null when up to date, no full list", async () => {
    const node = await harness.createNode(org, "hello-1");
    await setDesiredApps(harness.db, org.id, node.id, { put: [version("web@1.0").id, version("db@1.0").id] });
    await setDesiredApps(harness.db, org.id, node.id, { put: [version("web@2.0").id] });
    await setDesiredApps(harness.db, org.id, node.id, { del: [version("db@1.0").appId] });

    // First contact: everything (the one full list this node ever gets).
    const first = await hello(node, 0);
    expect(first).toMatchObject({ v: 1, hb: 1, mx: 1 });
    expect(first.d).toMatchObject({ from: 0, to: 3, del: ["db"] });
    expect(first.d?.put.map((put) => `${put.app}@${put.ver}`)).toEqual(["web@2.0"]);
    const fullLists = await harness.metric("edgefleet_gateway_desired_full_lists_total");

    // Reconnects: the agent applied 1, then 3.
    const resumed = await hello(node, 1);
    expect(resumed.d).toMatchObject({ from: 1, to: 3, del: ["db"] });
    expect(resumed.d?.put.map((put) => `${put.app}@${put.ver}`)).toEqual(["web@2.0"]);
    const current = await hello(node, 3);
    expect(current.d).toBeNull();
    expect(await harness.metric("edgefleet_gateway_desired_full_lists_total")).toBe(fullLists);

    const row = await harness.db.node.findUniqueOrThrow({ where: { id: node.id } });
    expect(row).toMatchObject({
      status: "online",
      agentVersion: "0.1.0",
      bootId: "boot-1",
      appliedRevision: 3,
    });
  });

  it("answers a storm of Hellos, each node its own delta and version, from a few batched statements", async () => {
    // 300 nodes say Hello at once (a leaf restart): some new, some up to date, some behind, one
    // twice. Handled one by one, each Hello took ~8 round trips and a storm starved the pool.
    const nodes = await Promise.all(
      Array.from({ length: 300 }, (_, i) => harness.createNode(org, `storm-${i}`)),
    );
    for (const node of nodes.slice(0, 100))
      await setDesiredApps(harness.db, org.id, node.id, { put: [version("web@1.0").id] });
    for (const node of nodes.slice(100, 200))
      await setDesiredApps(harness.db, org.id, node.id, {
        put: [version("web@1.0").id, version("db@1.0").id],
      });
    // nodes 0-99 at revision 1 and up to date; 100-199 at 1 of 1 (behind by nothing: rev 0 → all);
    // 200-299 have no desired apps (revision 0, up to date at 0).
    const revOf = (i: number) => (i < 100 ? 1 : 0);
    const storm = async (i: number, node: TestNode) => {
      const reply = await harness.nc.request(
        platformUpSubject(node.org, node.address, "hello"),
        encodeMessage("hello", {
          v: 1,
          av: `9.${i}.0`,
          os: "linux",
          arch: "x64",
          boot: `boot-${i}`,
          rev: revOf(i),
        }),
        { timeout: 10_000 },
      );
      const decoded = decodeMessage("helloReply", reply.data);
      if (!decoded.ok) throw new Error(decoded.detail);
      return decoded.msg;
    };
    const replies = await Promise.all([
      ...nodes.map((node, i) => storm(i, node)),
      storm(150, nodes[150] as TestNode),
    ]);
    for (const [i, reply] of replies.entries()) {
      const at = i === 300 ? 150 : i;
      if (at < 100) expect(reply.d, `node ${at}`).toBeNull();
      else if (at < 200) {
        expect(reply.d, `node ${at}`).toMatchObject({ from: 0, to: 1, del: [] });
        expect(reply.d?.put.map((put) => put.app).sort()).toEqual(["db", "web"]);
      } else expect(reply.d, `node ${at}`).toBeNull();
    }
    const rows = await harness.db.node.findMany({
      where: { id: { in: nodes.map((node) => node.id) } },
      select: { name: true, status: true, agentVersion: true, bootId: true, appliedRevision: true },
    });
    expect(rows).toHaveLength(300);
    for (const row of rows) {
      const i = Number(row.name.replace("storm-", ""));
      expect(row).toEqual({
        name: row.name,
        status: "online",
        agentVersion: `9.${i}.0`,
        bootId: `boot-${i}`,
        appliedRevision: revOf(i),
      });
    }
    expect(
      await harness.db.nodeStatusEvent.count({
        where: { nodeId: { in: nodes.map((node) => node.id) }, toStatus: "online", reason: "hello" },
      }),
    ).toBe(300);
  });

  it("re-publishes an unacknowledged delta to an online node (missed notification)", async () => {
    const node = await harness.createNode(org, "rescan-1");
    await hello(node, 0); // online, nothing desired yet
    const received = collectDeltas(node);
    await harness.nc.flush();
    // A writer that raises the revision without NOTIFY: only the catch-up scan can find it.
    await harness.db.$transaction(async (tx) => {
      await tx.appInstance.create({
        data: {
          organizationId: org.id,
          nodeId: node.id,
          appId: version("db@1.0").appId,
          desiredVersionId: version("db@1.0").id,
          desiredRevision: 1,
        },
      });
      await tx.node.update({ where: { id: node.id }, data: { desiredRevision: 1 } });
    });
    const [delta] = await waitFor(
      "rescan delta",
      async () => (received.length > 0 ? received : undefined),
      5_000,
    );
    expect(delta).toMatchObject({ from: 0, to: 1, put: [{ app: "db", ver: "1.0" }] });
  });

  it("DesiredAck moves applied_revision forwards only, and refuses a revision never desired", async () => {
    const node = await harness.createNode(org, "ack-1");
    await setDesiredApps(harness.db, org.id, node.id, { put: [version("web@1.0").id] });
    await setDesiredApps(harness.db, org.id, node.id, { put: [version("web@2.0").id] });
    const js = jetstream(harness.nc, { domain: "hub" });
    const subject = platformUpSubject(node.org, node.address, "ack");
    const applied = async () =>
      (await harness.db.node.findUniqueOrThrow({ where: { id: node.id } })).appliedRevision;
    await js.publish(subject, encodeMessage("desiredAck", { v: 1, rev: 2 }));
    await waitFor("ack stored", async () => ((await applied()) === 2 ? true : undefined), 5_000);
    const aheadBefore = await harness.metric("edgefleet_gateway_rejected_messages_total", {
      type: "ack",
      reason: "revision_ahead",
    });
    await js.publish(subject, encodeMessage("desiredAck", { v: 1, rev: 1 })); // late, older
    await js.publish(subject, encodeMessage("desiredAck", { v: 1, rev: 9 })); // never desired
    await waitFor("ahead rejected", async () => {
      const now = await harness.metric("edgefleet_gateway_rejected_messages_total", {
        type: "ack",
        reason: "revision_ahead",
      });
      return now > aheadBefore ? true : undefined;
    });
    expect(await applied()).toBe(2);
  });

  it("gives no answer to a bad Hello, and counts it", async () => {
    const node = await harness.createNode(org, "bad-hello");
    const before = await harness.metric("edgefleet_gateway_rejected_messages_total", {
      type: "hello",
      reason: "unknown_version",
    });
    const bad = Uint8Array.from([0x81, 0xa1, 0x76, 0x07]); // {v:7}
    await expect(
      harness.nc.request(platformUpSubject(node.org, node.address, "hello"), bad, { timeout: 500 }),
    ).rejects.toThrow();
    expect(
      await harness.metric("edgefleet_gateway_rejected_messages_total", {
        type: "hello",
        reason: "unknown_version",
      }),
    ).toBe(before + 1);
    expect((await harness.db.node.findUniqueOrThrow({ where: { id: node.id } })).status).toBe("offline");
  });

  it("counts a Hello whose revision overflows the column as invalid, without an error log (issue 8, #10)", async () => {
    const node = await harness.createNode(org, "huge-rev-hello");
    const invalid = () =>
      harness.metric("edgefleet_gateway_rejected_messages_total", { type: "hello", reason: "invalid" });
    const before = await invalid();
    const errorsBefore = harness.logs.filter((line) => line.level === 50).length;
    for (const rev of [2 ** 31, 2 ** 40]) {
      // Hostile bytes: encodeMessage would refuse them, so they are packed without the schema.
      const huge = encode({ v: 1, av: "0.1.0", os: "linux", arch: "x64", boot: "b", rev });
      await expect(
        harness.nc.request(platformUpSubject(node.org, node.address, "hello"), huge, { timeout: 500 }),
      ).rejects.toThrow();
    }
    expect(await invalid()).toBe(before + 2);
    expect(harness.logs.filter((line) => line.level === 50).length).toBe(errorsBefore);
  });
});
