import {
  decodeMessage,
  encodeMessage,
  type HelloReply,
  type NodeAddress,
  nodeAddressFromJwt,
  platformDownSubject,
  platformUpSubject,
  type UpType,
} from "@edgefleet/agent-sdk/protocol";
import { moveNodeToSite, setDesiredApps } from "@edgefleet/db";
import { sleep, waitFor } from "@edgefleet/nats-tenancy/testing";
import { jetstream } from "@nats-io/jetstream";
import type { Msg } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EdgeHarness, startEdgeHarness, type TestNode } from "../support/edge-harness.js";

// The gateway's half of site-scoped subjects (issue 8 #2) and downlink tokens (#12), on the
// platform side: a node's messages count only on its own site's subjects; a node moved to another
// site gets credentials for it; reports in flight at the move stay its own; nodes enrolled before
// site scoping (subject layout 1) keep working and are given layout-2 credentials. That NATS
// itself keeps a site's leaf to its own nodes is site-scope.integration.test.ts's (real leaves).

let harness: EdgeHarness;
let org: { id: string; org: string };
let siteA: { id: string; token: string };
let siteB: { id: string; token: string };

beforeAll(async () => {
  harness = await startEdgeHarness();
  org = await harness.createOrganization("scope");
  siteA = await harness.createSite(org, "plant-a");
  siteB = await harness.createSite(org, "plant-b");
});
afterAll(async () => {
  await harness?.stop();
});

/** The node's subject of `type` as if sent with credentials naming `site`. */
const on = (node: TestNode, site: string, type: UpType) =>
  platformUpSubject(node.org, { ...node.address, site, down: node.address.down ?? "x".repeat(22) }, type);

const helloPayload = (rev = 0) =>
  encodeMessage("hello", { v: 1, av: "0.1.0", os: "linux", arch: "x64", boot: "boot-1", rev });

async function hello(subject: string): Promise<HelloReply | null> {
  try {
    const reply = await harness.nc.request(subject, helloPayload(), { timeout: 1_500 });
    const decoded = decodeMessage("helloReply", reply.data);
    if (!decoded.ok) throw new Error(decoded.detail);
    return decoded.msg;
  } catch (error) {
    if (String(error).includes("TIMEOUT") || String(error).includes("timeout")) return null;
    throw error;
  }
}

const status = (seq: number) =>
  encodeMessage("statusReport", { v: 1, seq, at: Date.now(), inst: [{ app: "a", st: "running", rs: 0 }] });

const wrongSite = (type: string) =>
  harness.metric("edgefleet_gateway_rejected_messages_total", { type, reason: "wrong_site" });

const row = (node: TestNode) => harness.db.node.findUniqueOrThrow({ where: { id: node.id } });

function upIngest() {
  const service = harness.services.find((each) => each.name === "up-ingest");
  if (!service) throw new Error("no up-ingest service");
  return service;
}

describe("site-checked intake (issue 8 #2)", () => {
  it("takes a node's messages only on its own site's subjects", async () => {
    const node = await harness.createNode(org, "at-a", { siteId: siteA.id });
    expect(node.address.site).toBe(siteA.token);
    const hbBefore = await wrongSite("hb");
    const stBefore = await wrongSite("st");
    const helloBefore = await wrongSite("hello");

    // Another site of the same organization, and no site: what another leaf could send.
    for (const site of [siteB.token, "_"]) {
      harness.nc.publish(on(node, site, "hb"), encodeMessage("heartbeat", { v: 1, s: 1 }));
      expect(await hello(on(node, site, "hello"))).toBeNull();
      await jetstream(harness.nc).publish(on(node, site, "st"), status(5));
    }
    await waitFor("refused", async () => ((await wrongSite("st")) >= stBefore + 2 ? true : undefined));
    expect(await wrongSite("hb")).toBe(hbBefore + 2);
    expect(await wrongSite("hello")).toBe(helloBefore + 2);
    expect(await row(node)).toMatchObject({ status: "offline", statusSeq: 0n });

    // Its own site's.
    expect(await hello(on(node, siteA.token, "hello"))).toMatchObject({ hb: 1 });
    await jetstream(harness.nc).publish(on(node, siteA.token, "st"), status(6));
    await waitFor("stored", async () => ((await row(node)).statusSeq === 6n ? true : undefined));
    expect((await row(node)).status).toBe("online");
  });

  it("sends a node's deltas down its own downlink, whose last token only the gateway can derive (#12)", async () => {
    const node = await harness.createNode(org, "down-a", { siteId: siteA.id });
    const heard: string[] = [];
    const subscription = harness.nc.subscribe(`ef.t.${org.org}.down.>`, {
      callback: (_error, msg) => {
        heard.push(msg.subject);
      },
    });
    const app = await harness.db.app.create({ data: { organizationId: org.id, name: "down-app" } });
    const version = await harness.db.appVersion.create({
      data: { organizationId: org.id, appId: app.id, version: "1", runSpec: { command: ["x"] } },
    });
    await setDesiredApps(harness.db, org.id, node.id, { put: [version.id] });
    await waitFor("a delta", () => (heard.length > 0 ? true : undefined));
    subscription.unsubscribe();
    expect(heard).toEqual([platformDownSubject(node.org, node.address)]);
    expect(heard[0]).toMatch(
      new RegExp(`^ef\\.t\\.${org.org}\\.down\\.${siteA.token}\\.${node.wid}\\.[A-Za-z0-9_-]{22}$`),
    );
  });
});

describe("a node moved to another site", () => {
  it("gets credentials for its new site at its Hello on the old one, and nothing else counts there", async () => {
    const node = await harness.createNode(org, "moving", { siteId: siteA.id });
    expect(await moveNodeToSite(harness.db, org.id, node.id, siteB.id)).toBe(true);
    // The Hello its agent sends on the old site's subjects (it was offline at the move).
    const reply = await waitFor("an answer on the old site", () =>
      hello(on(node, siteA.token, "hello")).then((r) => r ?? undefined),
    );
    expect(reply.d).toBeNull();
    const address = nodeAddressFromJwt(reply.jwt ?? "") as NodeAddress;
    expect(address).toMatchObject({ wid: node.wid, site: siteB.token });
    expect(address.down).not.toBe(node.address.down);
    // That Hello did not bring it online; its heartbeats there are refused.
    const hbBefore = await wrongSite("hb");
    harness.nc.publish(on(node, siteA.token, "hb"), encodeMessage("heartbeat", { v: 1, s: 1 }));
    await waitFor("refused", async () => ((await wrongSite("hb")) > hbBefore ? true : undefined));
    expect((await row(node)).status).toBe("offline");

    // With the new credentials: online, listening on the new site.
    const moved = { ...node, address };
    expect(await hello(platformUpSubject(node.org, moved.address, "hello"))).toMatchObject({ hb: 1 });
    expect(await row(node)).toMatchObject({ status: "online", subjectSite: siteB.token });
    // Now the old site's Hello is another site's: not answered.
    expect(await hello(on(node, siteA.token, "hello"))).toBeNull();
  });

  it("keeps its reports stored before the move, refuses those sent from the old site after it", async () => {
    const node = await harness.createNode(org, "in-flight", { siteId: siteA.id });
    const ingest = upIngest();
    // The gateway is behind: reports wait in EF_UP.
    await ingest.stop();
    const js = jetstream(harness.nc);
    await js.publish(on(node, siteA.token, "st"), status(1));
    await sleep(20);
    expect(await moveNodeToSite(harness.db, org.id, node.id, siteB.id)).toBe(true);
    await sleep(20);
    await js.publish(on(node, siteA.token, "st"), status(2));
    const before = await wrongSite("st");
    await ingest.start(harness.nc);
    await waitFor("the second refused", async () => ((await wrongSite("st")) > before ? true : undefined));
    expect((await row(node)).statusSeq).toBe(1n);
  });

  it("is sent credentials for its new site on the downlink it still listens on, when it is online", async () => {
    const node = await harness.createNode(org, "pushed", { siteId: siteA.id });
    expect(await hello(on(node, siteA.token, "hello"))).toMatchObject({ hb: 1 });
    const pushed: Msg[] = [];
    const subscription = harness.nc.subscribe(platformDownSubject(node.org, node.address), {
      callback: (_error, msg) => {
        pushed.push(msg);
      },
    });
    await harness.nc.flush();
    expect(await moveNodeToSite(harness.db, org.id, node.id, siteB.id)).toBe(true);
    await waitFor("a CredentialsUpdate", () => (pushed.length > 0 ? true : undefined), 10_000);
    subscription.unsubscribe();
    const update = decodeMessage("credentialsUpdate", pushed[0]?.data ?? new Uint8Array());
    if (!update.ok) throw new Error(update.detail);
    expect(nodeAddressFromJwt(update.msg.jwt)).toMatchObject({ wid: node.wid, site: siteB.token });
    expect(
      await harness.metric("edgefleet_gateway_node_credentials_issued_total", { via: "push" }),
    ).toBeGreaterThan(0);
  });
});

describe("a node enrolled before site scoping (subject layout 1)", () => {
  it("keeps working on its subjects and gets layout-2 credentials at its Hello", async () => {
    const node = await harness.createNode(org, "layout-1", { siteId: siteA.id, layout1: true });
    const reply = await hello(platformUpSubject(node.org, node.address, "hello"));
    expect(nodeAddressFromJwt(reply?.jwt ?? "")).toMatchObject({ wid: node.wid, site: siteA.token });
    expect(await row(node)).toMatchObject({ status: "online", subjectSite: null });
    await jetstream(harness.nc).publish(platformUpSubject(node.org, node.address, "st"), status(3));
    await waitFor("stored", async () => ((await row(node)).statusSeq === 3n ? true : undefined));
    // Its deltas go down its layout-1 downlink, where an agent that never migrates listens.
    const heard: string[] = [];
    const subscription = harness.nc.subscribe(`ef.t.${org.org}.down.>`, {
      callback: (_error, msg) => {
        heard.push(msg.subject);
      },
    });
    const app = await harness.db.app.create({ data: { organizationId: org.id, name: "legacy-app" } });
    const version = await harness.db.appVersion.create({
      data: { organizationId: org.id, appId: app.id, version: "1", runSpec: { command: ["x"] } },
    });
    await setDesiredApps(harness.db, org.id, node.id, { put: [version.id] });
    await waitFor("a delta", () => (heard.length > 0 ? true : undefined));
    subscription.unsubscribe();
    expect(heard).toEqual([`ef.t.${org.org}.down.${node.wid}`]);
  });
});
