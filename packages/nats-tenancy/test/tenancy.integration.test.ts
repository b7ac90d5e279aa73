import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { createAccount, createUser } from "@nats-io/nkeys";
import {
  connect,
  credsAuthenticator,
  jwtAuthenticator,
  type NatsConnection,
  type Subscription,
} from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTenancySecrets,
  formatCreds,
  leafNodeConfig,
  nodeUserJwt,
  pushAccountJwt,
  siteLeafUserJwt,
  type TenancySecrets,
  tenantAccountJwt,
} from "../src/index";
import { type RunningNats, startNats, startOperatorModeHub } from "../src/testing";

// Real hub and leaf nats-servers in operator mode, with accounts and users minted by this
// package: proves who can reach which subject, through the hub and through a leaf.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

let secrets: TenancySecrets;
let hub: RunningNats & { leafUrl: string };
let leaf: RunningNats;
let platform: NatsConnection;
let system: NatsConnection;
const opened: NatsConnection[] = [];

interface TestOrg {
  wireId: string;
  account: ReturnType<typeof createAccount>;
}
const orgA: TestOrg = { wireId: "a1", account: createAccount() };
const orgB: TestOrg = { wireId: "b1", account: createAccount() };

const accountJwt = (org: TestOrg, revokedUserKeys: Record<string, number> = {}) =>
  tenantAccountJwt(secrets, {
    accountPublicKey: org.account.getPublicKey(),
    organizationWireId: org.wireId,
    name: `org-${org.wireId}`,
    revokedUserKeys,
  });

interface TestNode {
  wid: string;
  org: TestOrg;
  key: ReturnType<typeof createUser>;
  jwt: string;
}
async function makeNode(org: TestOrg, wid: string): Promise<TestNode> {
  const key = createUser();
  const jwt = await nodeUserJwt(secrets, {
    nodeId: `node-${wid}`,
    wid,
    publicKey: key.getPublicKey(),
    accountPublicKey: org.account.getPublicKey(),
  });
  return { wid, org, key, jwt };
}

async function connectNode(node: TestNode, url: string, extra: { maxReconnectAttempts?: number } = {}) {
  const nc = await connect({
    servers: url,
    authenticator: jwtAuthenticator(node.jwt, node.key.getSeed()),
    inboxPrefix: `_INBOX.${node.wid}`,
    ...extra,
  });
  opened.push(nc);
  return nc;
}

const credsConnect = async (url: string, creds: string) => {
  const nc = await connect({ servers: url, authenticator: credsAuthenticator(encoder.encode(creds)) });
  opened.push(nc);
  return nc;
};

/** Collects the subjects a subscription receives during `ms`. */
async function received(sub: Subscription, ms: number): Promise<string[]> {
  const subjects: string[] = [];
  const timer = setTimeout(() => sub.unsubscribe(), ms);
  for await (const msg of sub) subjects.push(msg.subject);
  clearTimeout(timer);
  return subjects;
}

/** Waits for the next permission error reported on a connection's status stream. */
async function nextPermissionError(nc: NatsConnection, timeoutMs = 2000): Promise<string | null> {
  const deadline = new Promise<null>((resolve) => setTimeout(() => resolve(null), timeoutMs));
  const watch = (async () => {
    for await (const status of nc.status()) {
      if (status.type === "error" && /permission/i.test(String(status.error))) return String(status.error);
    }
    return null;
  })();
  return Promise.race([watch, deadline]);
}

let nodeA1: TestNode;
let nodeA2: TestNode;
let nodeB1: TestNode;

beforeAll(async () => {
  secrets = await createTenancySecrets("test-operator");
  hub = await startOperatorModeHub(secrets);
  platform = await credsConnect(hub.url, secrets.platform.userCreds);
  system = await credsConnect(hub.url, secrets.system.userCreds);
  await pushAccountJwt(system, await accountJwt(orgA));
  await pushAccountJwt(system, await accountJwt(orgB));
  nodeA1 = await makeNode(orgA, "w1");
  nodeA2 = await makeNode(orgA, "w2");
  nodeB1 = await makeNode(orgB, "w3");

  const jsm = await jetstreamManager(platform);
  await jsm.streams.add({ name: "EF_UP", subjects: ["ef.t.*.up.*.st"], duplicate_window: 600_000_000_000 });

  // A site of organization A, with its own leaf node process.
  const siteKey = createUser();
  const siteJwt = await siteLeafUserJwt(secrets, {
    siteId: "plant-7",
    publicKey: siteKey.getPublicKey(),
    accountPublicKey: orgA.account.getPublicKey(),
    expiresAt: new Date(Date.now() + 3_600_000),
  });
  const accountJwtA = await accountJwt(orgA);
  leaf = await startNats(({ dir, port, monitorPort }) => {
    const credentialsPath = join(dir, "site.creds");
    writeFileSync(credentialsPath, formatCreds(siteJwt, siteKey));
    return `${leafNodeConfig(secrets, {
      serverName: "site-plant-7",
      listen: `127.0.0.1:${port}`,
      hubLeafUrls: [hub.leafUrl],
      credentialsPath,
      accountPublicKey: orgA.account.getPublicKey(),
      accountJwt: accountJwtA,
    })}\nhttp: 127.0.0.1:${monitorPort}\n`;
  });
  // Wait for the leaf connection to the hub.
  for (let i = 0; i < 100; i++) {
    const leafz = (await (await fetch(`${hub.monitorUrl}/leafz`)).json()) as { leafnodes: number };
    if (leafz.leafnodes > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

afterAll(async () => {
  await Promise.allSettled(opened.map((nc) => nc.close()));
  await leaf?.stop();
  await hub?.stop();
});

describe("tenant accounts on the hub", () => {
  it("delivers a node's uplink to the platform under its organization's and node's subject", async () => {
    const sub = platform.subscribe("ef.t.*.up.>");
    const a1 = await connectNode(nodeA1, hub.url);
    const b1 = await connectNode(nodeB1, hub.url);
    const got = received(sub, 500);
    a1.publish("ef.up.w1.hb", encoder.encode("x"));
    b1.publish("ef.up.w3.hb", encoder.encode("x"));
    expect((await got).sort()).toEqual(["ef.t.a1.up.w1.hb", "ef.t.b1.up.w3.hb"]);
  });

  it("answers a node's request through the service import", async () => {
    const responder = platform.subscribe("ef.t.*.up.*.hello", {
      callback: (_err, msg) => {
        msg.respond(encoder.encode(`hello ${msg.subject}`));
      },
    });
    const a1 = await connectNode(nodeA1, hub.url);
    const reply = await a1.request("ef.up.w1.hello", encoder.encode("hi"), { timeout: 2000 });
    expect(decoder.decode(reply.data)).toBe("hello ef.t.a1.up.w1.hello");
    responder.unsubscribe();
  });

  it("stores a node's JetStream publish in the platform's stream and acks it", async () => {
    const a1 = await connectNode(nodeA1, hub.url);
    const ack = await jetstream(a1).publish("ef.up.w1.st", encoder.encode("status"), { msgID: "w1.st.1" });
    expect(ack.stream).toBe("EF_UP");
    const again = await jetstream(a1).publish("ef.up.w1.st", encoder.encode("status"), { msgID: "w1.st.1" });
    expect(again.duplicate).toBe(true);
    const stored = await (await jetstreamManager(platform)).streams.getMessage("EF_UP", { seq: ack.seq });
    expect(stored?.subject).toBe("ef.t.a1.up.w1.st");
  });

  it("delivers the downlink only to the addressed node of the addressed organization", async () => {
    const a1 = await connectNode(nodeA1, hub.url);
    const b1 = await connectNode(nodeB1, hub.url);
    const atA1 = received(a1.subscribe("ef.down.w1"), 500);
    const atB1 = received(b1.subscribe("ef.down.w3"), 500);
    await a1.flush();
    await b1.flush();
    platform.publish("ef.t.a1.down.w1", encoder.encode("delta"));
    // Organization B's node w3 listens on its own subject; a1's w3 subject is not its org.
    platform.publish("ef.t.a1.down.w3", encoder.encode("delta"));
    expect(await atA1).toEqual(["ef.down.w1"]);
    expect(await atB1).toEqual([]);
  });

  it("refuses a node publishing as another node", async () => {
    const sub = platform.subscribe("ef.t.*.up.>");
    const a1 = await connectNode(nodeA1, hub.url);
    const violation = nextPermissionError(a1);
    const got = received(sub, 500);
    a1.publish("ef.up.w2.hb", encoder.encode("forged"));
    a1.publish("ef.t.b1.up.w3.hb", encoder.encode("forged"));
    expect(await violation).toMatch(/ef\.up\.w2\.hb|ef\.t\.b1/);
    expect(await got).toEqual([]);
  });

  it("refuses a node listening to another node's downlink or to everything", async () => {
    const a1 = await connectNode(nodeA1, hub.url);
    const violation = nextPermissionError(a1);
    a1.subscribe("ef.down.w2");
    a1.subscribe(">");
    expect(await violation).toMatch(/subscription/i);
  });

  it("lets the public enroll credentials ask to enroll and nothing else", async () => {
    const responder = platform.subscribe("ef.enroll", {
      callback: (_err, msg) => {
        msg.respond(encoder.encode("enrolled"));
      },
    });
    const enroll = await credsConnect(hub.url, secrets.enroll.userCreds);
    const reply = await enroll.request("ef.enroll", encoder.encode("token"), { timeout: 2000 });
    expect(decoder.decode(reply.data)).toBe("enrolled");
    const sub = platform.subscribe("ef.t.*.up.>");
    const got = received(sub, 400);
    const violation = nextPermissionError(enroll);
    enroll.publish("ef.up.w1.hb", encoder.encode("x"));
    expect(await violation).not.toBeNull();
    expect(await got).toEqual([]);
    responder.unsubscribe();
  });
});

describe("a site's leaf node", () => {
  it("carries a node's uplink, acked JetStream publish and downlink through the leaf", async () => {
    const sub = platform.subscribe("ef.t.*.up.*.hb");
    const a2 = await connectNode(nodeA2, leaf.url);
    const down = received(a2.subscribe("ef.down.w2"), 1500);
    const up = received(sub, 1500);
    await a2.flush();
    // Interest from the leaf reaches the hub asynchronously.
    await new Promise((resolve) => setTimeout(resolve, 300));
    a2.publish("ef.up.w2.hb", encoder.encode("x"));
    platform.publish("ef.t.a1.down.w2", encoder.encode("delta"));
    const ack = await jetstream(a2).publish("ef.up.w2.st", encoder.encode("status"), { msgID: "w2.st.1" });
    expect(ack.stream).toBe("EF_UP");
    expect(await up).toEqual(["ef.t.a1.up.w2.hb"]);
    expect(await down).toEqual(["ef.down.w2"]);
  });

  it("enforces each node's own permissions at the leaf", async () => {
    const sub = platform.subscribe("ef.t.*.up.>");
    const a2 = await connectNode(nodeA2, leaf.url);
    const violation = nextPermissionError(a2);
    const got = received(sub, 600);
    a2.publish("ef.up.w1.hb", encoder.encode("forged"));
    expect(await violation).not.toBeNull();
    expect(await got).toEqual([]);
  });

  it("does not admit another organization's node", async () => {
    await expect(connectNode(nodeB1, leaf.url, { maxReconnectAttempts: 0 })).rejects.toThrow();
  });
});

describe("revocation", () => {
  it("cuts a revoked node off at once and refuses its reconnect", async () => {
    const victim = await makeNode(orgB, "w9");
    const nc = await connectNode(victim, hub.url, { maxReconnectAttempts: 0 });
    const closed = nc.closed();
    await pushAccountJwt(
      system,
      await accountJwt(orgB, { [victim.key.getPublicKey()]: Math.floor(Date.now() / 1000) + 1 }),
    );
    await expect(
      Promise.race([closed.then(() => "closed"), new Promise((r) => setTimeout(() => r("open"), 3000))]),
    ).resolves.toBe("closed");
    await expect(connectNode(victim, hub.url, { maxReconnectAttempts: 0 })).rejects.toThrow();
    // The organization's other nodes are unaffected.
    await expect(connectNode(nodeB1, hub.url)).resolves.toBeDefined();
  });
});
