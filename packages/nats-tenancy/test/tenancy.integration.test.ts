import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  agentDownSubject,
  agentUpSubject,
  type NodeAddress,
  nodeAddressFromJwt,
  nodeInboxPrefix,
} from "@edgefleet/agent-sdk/protocol";
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
  LEAF_LINK_COMPRESSION,
  LEAF_QUIET_LINK_COMPRESSION,
  leafNodeConfig,
  leafPingIntervalSeconds,
  nodeUserJwt,
  pushAccountJwt,
  siteCacheSeederUserJwt,
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
  /** What its JWT names, as the agent reads it. */
  address: NodeAddress;
  up: (type: "hb" | "hello" | "st") => string;
  down: string;
}
/** Site tokens: the leaf of organization A serves `_1`; `_2` is another site of A; `_` no site. */
const LEAF_SITE = "_1";
const OTHER_SITE = "_2";
async function makeNode(org: TestOrg, wid: string, site: string): Promise<TestNode> {
  const key = createUser();
  const jwt = await nodeUserJwt(secrets, {
    nodeId: `node-${wid}`,
    org: org.wireId,
    wid,
    site,
    publicKey: key.getPublicKey(),
    accountPublicKey: org.account.getPublicKey(),
  });
  const address = nodeAddressFromJwt(jwt);
  if (!address) throw new Error("the node JWT names no address");
  return {
    wid,
    org,
    key,
    jwt,
    address,
    up: (type) => agentUpSubject(address, type),
    down: agentDownSubject(address),
  };
}

async function connectNode(node: TestNode, url: string, extra: { maxReconnectAttempts?: number } = {}) {
  const nc = await connect({
    servers: url,
    authenticator: jwtAuthenticator(node.jwt, node.key.getSeed()),
    inboxPrefix: nodeInboxPrefix(node.address),
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

/** A1 has no site (on the hub), A2 is at the leaf's site, A3 at another site of A; B1 in org B. */
let nodeA1: TestNode;
let nodeA2: TestNode;
let nodeA3: TestNode;
let nodeB1: TestNode;
let siteCreds: string;

beforeAll(async () => {
  secrets = await createTenancySecrets("test-operator");
  hub = await startOperatorModeHub(secrets);
  platform = await credsConnect(hub.url, secrets.platform.userCreds);
  system = await credsConnect(hub.url, secrets.system.userCreds);
  await pushAccountJwt(system, await accountJwt(orgA));
  await pushAccountJwt(system, await accountJwt(orgB));
  nodeA1 = await makeNode(orgA, "w1", "_");
  nodeA2 = await makeNode(orgA, "w2", LEAF_SITE);
  nodeA3 = await makeNode(orgA, "w4", OTHER_SITE);
  nodeB1 = await makeNode(orgB, "w3", LEAF_SITE);

  const jsm = await jetstreamManager(platform);
  await jsm.streams.add({
    name: "EF_UP",
    subjects: ["ef.t.*.up.*.*.st", "ef.t.*.up.*.st"],
    duplicate_window: 600_000_000_000,
  });

  // A site of organization A, with its own leaf node process.
  const siteKey = createUser();
  const siteJwt = await siteLeafUserJwt(secrets, {
    siteId: "plant-7",
    site: LEAF_SITE,
    publicKey: siteKey.getPublicKey(),
    accountPublicKey: orgA.account.getPublicKey(),
    expiresAt: new Date(Date.now() + 3_600_000),
  });
  siteCreds = formatCreds(siteJwt, siteKey);
  const accountJwtA = await accountJwt(orgA);
  leaf = await startNats(({ dir, port, monitorPort }) => {
    const credentialsPath = join(dir, "site.creds");
    writeFileSync(credentialsPath, siteCreds);
    return `${leafNodeConfig(secrets, {
      serverName: "site-plant-7",
      listen: `127.0.0.1:${port}`,
      hubLeafUrls: [hub.leafUrl],
      credentialsPath,
      accountPublicKey: orgA.account.getPublicKey(),
      accountJwt: accountJwtA,
    })}\nhttp: 127.0.0.1:${monitorPort}\n`;
  });
  await leafLinks(1);
});

/** Waits until the hub holds this many leaf connections. */
async function leafLinks(count: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const leafz = (await (await fetch(`${hub.monitorUrl}/leafz`)).json()) as { leafnodes: number };
    if (leafz.leafnodes >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the hub never held ${count} leaf connections`);
}

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
    a1.publish(nodeA1.up("hb"), encoder.encode("x"));
    b1.publish(nodeB1.up("hb"), encoder.encode("x"));
    expect((await got).sort()).toEqual(["ef.t.a1.up._.w1.hb", "ef.t.b1.up._1.w3.hb"]);
  });

  it("answers a node's request through the service import", async () => {
    const responder = platform.subscribe("ef.t.*.up.*.*.hello", {
      callback: (_err, msg) => {
        msg.respond(encoder.encode(`hello ${msg.subject}`));
      },
    });
    const a1 = await connectNode(nodeA1, hub.url);
    const reply = await a1.request(nodeA1.up("hello"), encoder.encode("hi"), { timeout: 2000 });
    expect(decoder.decode(reply.data)).toBe("hello ef.t.a1.up._.w1.hello");
    responder.unsubscribe();
  });

  it("stores a node's JetStream publish in the platform's stream and acks it", async () => {
    const a1 = await connectNode(nodeA1, hub.url);
    const ack = await jetstream(a1).publish(nodeA1.up("st"), encoder.encode("status"), { msgID: "w1.st.1" });
    expect(ack.stream).toBe("EF_UP");
    const again = await jetstream(a1).publish(nodeA1.up("st"), encoder.encode("status"), {
      msgID: "w1.st.1",
    });
    expect(again.duplicate).toBe(true);
    const stored = await (await jetstreamManager(platform)).streams.getMessage("EF_UP", { seq: ack.seq });
    expect(stored?.subject).toBe("ef.t.a1.up._.w1.st");
  });

  it("delivers the downlink only to the addressed node of the addressed organization", async () => {
    const a1 = await connectNode(nodeA1, hub.url);
    const b1 = await connectNode(nodeB1, hub.url);
    const atA1 = received(a1.subscribe(nodeA1.down), 500);
    const atB1 = received(b1.subscribe(nodeB1.down), 500);
    await a1.flush();
    await b1.flush();
    platform.publish(`ef.t.a1.${nodeA1.down.slice(3)}`, encoder.encode("delta"));
    // Organization B's node w3 listens on its own subject; a1's w3 subject is not its org.
    platform.publish(`ef.t.a1.${nodeB1.down.slice(3)}`, encoder.encode("delta"));
    expect(await atA1).toEqual([nodeA1.down]);
    expect(await atB1).toEqual([]);
  });

  it("refuses a node publishing as another node", async () => {
    const sub = platform.subscribe("ef.t.*.up.>");
    const a1 = await connectNode(nodeA1, hub.url);
    const violation = nextPermissionError(a1);
    const got = received(sub, 500);
    a1.publish(nodeA2.up("hb"), encoder.encode("forged"));
    a1.publish("ef.up._.w2.hb", encoder.encode("forged"));
    a1.publish("ef.up.w1.hb", encoder.encode("forged: its own layout-1 subject"));
    a1.publish("ef.t.b1.up._1.w3.hb", encoder.encode("forged"));
    expect(await violation).toMatch(/ef\.up\.|ef\.t\.b1/);
    expect(await got).toEqual([]);
  });

  it("refuses a node listening to another node's downlink or to everything", async () => {
    const a1 = await connectNode(nodeA1, hub.url);
    const violation = nextPermissionError(a1);
    a1.subscribe(`ef.down.${LEAF_SITE}.w2.>`);
    a1.subscribe(">");
    expect(await violation).toMatch(/subscription/i);
  });

  it("names each node's downlink with a token of its own: no node can name another's (#12)", () => {
    const tokens = [nodeA1, nodeA2, nodeA3, nodeB1].map((node) => node.address.down);
    expect(new Set(tokens).size).toBe(4);
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(nodeA2.down).toBe(`ef.down.${LEAF_SITE}.w2.${nodeA2.address.down}`);
  });

  it("never delivers a reply a node points at another node's downlink (#12)", async () => {
    // The platform answers every Hello on whatever reply subject NATS made for it (across the
    // service import it sees only `_R_.…`, never what the requester named).
    const responder = platform.subscribe("ef.t.*.up.>", {
      callback: (_err, msg) => {
        if (msg.reply) msg.respond(encoder.encode("a reply the victim must not get"));
      },
    });
    const attacker = await connectNode(nodeA1, hub.url);
    const victim = await connectNode(nodeA3, hub.url);
    const atVictim = received(victim.subscribe(nodeA3.down), 800);
    await victim.flush();
    // Every name of the victim's downlink the attacker can know (the token it cannot).
    for (const reply of [`ef.down.${OTHER_SITE}.w4`, "ef.down.w4", `ef.down.${OTHER_SITE}.w4.x`])
      attacker.publish(nodeA1.up("hello"), encoder.encode("hi"), { reply });
    expect(await atVictim).toEqual([]);
    responder.unsubscribe();
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
    const sub = platform.subscribe("ef.t.*.up.*.*.hb");
    const a2 = await connectNode(nodeA2, leaf.url);
    const down = received(a2.subscribe(nodeA2.down), 1500);
    const up = received(sub, 1500);
    await a2.flush();
    // Interest from the leaf reaches the hub asynchronously.
    await new Promise((resolve) => setTimeout(resolve, 300));
    a2.publish(nodeA2.up("hb"), encoder.encode("x"));
    platform.publish(`ef.t.a1.${nodeA2.down.slice(3)}`, encoder.encode("delta"));
    const ack = await jetstream(a2).publish(nodeA2.up("st"), encoder.encode("status"), { msgID: "w2.st.1" });
    expect(ack.stream).toBe("EF_UP");
    expect(await up).toEqual([`ef.t.a1.up.${LEAF_SITE}.w2.hb`]);
    expect(await down).toEqual([nodeA2.down]);
  });

  it("enforces each node's own permissions at the leaf", async () => {
    const sub = platform.subscribe("ef.t.*.up.>");
    const a2 = await connectNode(nodeA2, leaf.url);
    const violation = nextPermissionError(a2);
    const got = received(sub, 600);
    a2.publish(nodeA1.up("hb"), encoder.encode("forged"));
    expect(await violation).not.toBeNull();
    expect(await got).toEqual([]);
  });

  it("pings only a client silent for 1.5 metrics intervals (a reporting node's link carries no PINGs)", async () => {
    const varz = (await (await fetch(`${leaf.monitorUrl}/varz`)).json()) as {
      ping_interval: number;
      ping_max: number;
    };
    expect({ pingInterval: varz.ping_interval / 1e9, pingMax: varz.ping_max }).toEqual({
      pingInterval: 90,
      pingMax: 2,
    });
    expect([30, 60, 120, 300].map(leafPingIntervalSeconds)).toEqual([60, 90, 180, 450]);
  });

  it("compresses its links to the hub at a fixed level that does not climb with the RTT", async () => {
    const leafz = (await (await fetch(`${hub.monitorUrl}/leafz`)).json()) as {
      leafs: { account: string; compression: string }[];
    };
    expect(leafz.leafs.length).toBeGreaterThan(0);
    expect(new Set(leafz.leafs.map((link) => link.compression))).toEqual(new Set([LEAF_LINK_COMPRESSION]));
    // The system and enrollment links carry almost nothing: no S2 buffers for them on either side.
    const config = leafNodeConfig(secrets, {
      serverName: "site-quiet-links",
      listen: "127.0.0.1:4222",
      hubLeafUrls: [hub.leafUrl],
      credentialsPath: "/site.creds",
      systemCredentialsPath: "/system.creds",
      enrollCredentialsPath: "/enroll.creds",
      accountPublicKey: orgA.account.getPublicKey(),
      accountJwt: "jwt",
    });
    expect([...config.matchAll(/compression: (\S+)/g)].map((match) => match[1])).toEqual([
      LEAF_LINK_COMPRESSION,
      LEAF_QUIET_LINK_COMPRESSION,
      LEAF_QUIET_LINK_COMPRESSION,
    ]);
  });

  it("does not admit another organization's node", async () => {
    await expect(connectNode(nodeB1, leaf.url, { maxReconnectAttempts: 0 })).rejects.toThrow();
  });
});

describe("whoever holds a site's leaf credentials (issue 8 #2)", () => {
  // The leaf machine's operator runs their own leaf with the site's credentials and no checks of
  // their own: every local client speaks through the site user, with its permissions only.
  let hostile: RunningNats;
  let local: NatsConnection;

  beforeAll(async () => {
    hostile = await startNats(({ dir, port, monitorPort }) => {
      const credentialsPath = join(dir, "site.creds");
      writeFileSync(credentialsPath, siteCreds);
      return [
        `listen: 127.0.0.1:${port}`,
        `http: 127.0.0.1:${monitorPort}`,
        "leafnodes {",
        `  remotes: [{ urls: ${JSON.stringify([hub.leafUrl])}, credentials: ${JSON.stringify(credentialsPath)} }]`,
        "}",
      ].join("\n");
    });
    await leafLinks(2);
    local = await connect({ servers: hostile.url });
    opened.push(local);
    // The hub's interest reaches the new leaf asynchronously: wait until its own site's subject
    // gets through, so that what does not get through below is refused, not early.
    const arrived = platform.subscribe(`ef.t.a1.up.${LEAF_SITE}.w2.hb`, { max: 1 });
    const first = (async () => {
      for await (const _ of arrived) return true;
      return false;
    })();
    const pinger = setInterval(() => local.publish(nodeA2.up("hb"), encoder.encode("ready?")), 100);
    await first;
    clearInterval(pinger);
    await new Promise((resolve) => setTimeout(resolve, 200));
  });

  afterAll(async () => {
    await hostile?.stop();
  });

  it("cannot publish as a node of another site of the same organization, nor in layout 1", async () => {
    const sub = platform.subscribe("ef.t.a1.up.>");
    const got = received(sub, 1000);
    await platform.flush();
    // Its own site's node: carried (the site's operator is that site's local authority).
    local.publish(nodeA2.up("hb"), encoder.encode("own site"));
    // Another site's node, a node without a site, the layout-1 subjects of any node: refused.
    local.publish(nodeA3.up("hb"), encoder.encode("forged"));
    local.publish(nodeA1.up("hb"), encoder.encode("forged"));
    local.publish("ef.up.w4.hb", encoder.encode("forged"));
    local.publish("ef.up.w2.hb", encoder.encode("forged"));
    await local.flush();
    expect(await got).toEqual([`ef.t.a1.up.${LEAF_SITE}.w2.hb`]);
  });

  it("cannot get another site's node's report stored in EF_UP", async () => {
    const jsm = await jetstreamManager(platform);
    const before = (await jsm.streams.info("EF_UP")).state.last_seq;
    await expect(
      jetstream(local).publish(nodeA3.up("st"), encoder.encode("forged status"), { timeout: 1500 }),
    ).rejects.toThrow();
    expect((await jsm.streams.info("EF_UP")).state.last_seq).toBe(before);
  });

  it("hears only its own site's downlinks", async () => {
    const downs = received(local.subscribe("ef.down.>"), 1200);
    await local.flush();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const toPlatform = (down: string) => `ef.t.a1.${down.slice(3)}`;
    platform.publish(toPlatform(nodeA2.down), encoder.encode("own site"));
    platform.publish(toPlatform(nodeA3.down), encoder.encode("another site"));
    platform.publish("ef.t.a1.down.w4", encoder.encode("a layout-1 downlink"));
    platform.publish(toPlatform(nodeA1.down), encoder.encode("no site"));
    expect(await downs).toEqual([nodeA2.down]);
  });

  it("can answer only its own site's cache seeder, not another site's", async () => {
    // Two seeders of organization A on the hub, as the gateway runs them: one filling this leaf's
    // site ("plant-7"), one another site's. The leaf may answer the first only.
    const seeder = async (siteId: string) => {
      const key = createUser();
      const jwt = await siteCacheSeederUserJwt(secrets, {
        siteId,
        publicKey: key.getPublicKey(),
        accountPublicKey: orgA.account.getPublicKey(),
        expiresAt: new Date(Date.now() + 3_600_000),
      });
      const nc = await connect({ servers: hub.url, authenticator: jwtAuthenticator(jwt, key.getSeed()) });
      opened.push(nc);
      return nc;
    };
    const own = await seeder("plant-7");
    const other = await seeder("plant-9");
    const ownReplies = received(own.subscribe("_INBOX.efsc.plant-7.>"), 1500);
    const otherReplies = received(other.subscribe("_INBOX.efsc.plant-9.>"), 1500);
    await Promise.all([own.flush(), other.flush()]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    local.publish("_INBOX.efsc.plant-7.seed.1", encoder.encode("own site's answer"));
    local.publish("_INBOX.efsc.plant-9.seed.1", encoder.encode("forged answer"));
    await local.flush();
    expect(await ownReplies).toEqual(["_INBOX.efsc.plant-7.seed.1"]);
    expect(await otherReplies).toEqual([]);
  });

  it("hears no reply to another site's node", async () => {
    const responder = platform.subscribe("ef.t.a1.up.*.*.hello", {
      callback: (_err, msg) => void msg.respond(encoder.encode("welcome")),
    });
    const inboxes = received(local.subscribe("_INBOX.>"), 1500);
    await local.flush();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Both nodes on the hub: one of the leaf's site, one of another site.
    const own = await connectNode(nodeA2, hub.url);
    const other = await connectNode(nodeA3, hub.url);
    await own.request(nodeA2.up("hello"), encoder.encode("hi"), { timeout: 2000 });
    await other.request(nodeA3.up("hello"), encoder.encode("hi"), { timeout: 2000 });
    const heard = await inboxes;
    expect(heard.every((subject) => subject.startsWith(`_INBOX.${LEAF_SITE}.w2.`))).toBe(true);
    responder.unsubscribe();
  });
});

describe("revocation", () => {
  it("cuts a revoked node off at once and refuses its reconnect", async () => {
    const victim = await makeNode(orgB, "w9", "_");
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
