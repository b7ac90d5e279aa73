// Test support shared by packages whose tests need real nats-server processes (hub and leaf). The
// generic harness lives in the agent SDK (nats-tenancy depends on it, not the other way round).

import { join } from "node:path";
import { SITE_CACHE_DIRECT_GET_SUBJECT } from "@edgefleet/agent-sdk/protocol";
import { freePort, type RunningNats, startNats } from "@edgefleet/agent-sdk/testing";
import { Algorithms, encodeUser } from "@nats-io/jwt";
import { serverAuthConfig, type TenancySecrets } from "./bootstrap";
import { keyPairFromSeed } from "./keys";

export {
  freePort,
  LinkCutter,
  type NatsPorts,
  natsServerBin,
  type RunningNats,
  sleep,
  startNats,
  waitFor,
} from "@edgefleet/agent-sdk/testing";

/** A hub as the stack runs it: operator mode, JetStream domain "hub", a leafnode listener. */
export async function startOperatorModeHub(
  secrets: TenancySecrets,
): Promise<RunningNats & { leafUrl: string }> {
  let leafPort = 0;
  const hub = await startNats(async ({ dir, port, monitorPort }) => {
    leafPort = await freePort();
    return `
listen: 127.0.0.1:${port}
http: 127.0.0.1:${monitorPort}
jetstream { domain: hub, store_dir: ${JSON.stringify(join(dir, "js"))} }
# no_advertise: leaf nodes must reconnect through the URL they were given (a test may put a
# cuttable link there), not to addresses the hub advertises.
leafnodes { listen: 127.0.0.1:${leafPort}, isolate_leafnode_interest: true, no_advertise: true, compression: accept }
${serverAuthConfig(secrets, join(dir, "jwt"))}`;
  });
  return Object.assign(hub, { leafUrl: `nats-leaf://127.0.0.1:${leafPort}` });
}

/** A hub without auth (JetStream in domain "hub", like the real hub), for the platform side alone. */
export function startPlainHub(): Promise<RunningNats> {
  return startNats(
    ({ dir, port, monitorPort }) =>
      `listen: 127.0.0.1:${port}\nhttp: 127.0.0.1:${monitorPort}\njetstream { domain: hub, store_dir: ${JSON.stringify(join(dir, "js"))} }\n`,
  );
}

/**
 * A hub cluster as the `ha` stack runs it: `size` operator-mode nodes with JetStream in domain "hub",
 * routes to each other, each with its own resolver folder and store. All start at once: a node is
 * healthy only once JetStream has a meta leader, which takes a quorum.
 */
export async function startOperatorModeCluster(
  secrets: TenancySecrets,
  size = 3,
): Promise<{ nodes: RunningNats[]; urls: string[]; stop: () => Promise<void> }> {
  const clusterPorts = await Promise.all(Array.from({ length: size }, () => freePort()));
  const routes = clusterPorts.map((port) => `"nats-route://127.0.0.1:${port}"`).join(", ");
  const nodes = await Promise.all(
    clusterPorts.map((clusterPort, index) =>
      startNats(
        ({ dir, port, monitorPort }) => `
server_name: hub-${index + 1}
listen: 127.0.0.1:${port}
http: 127.0.0.1:${monitorPort}
jetstream { domain: hub, store_dir: ${JSON.stringify(join(dir, "js"))} }
cluster { name: hub, listen: 127.0.0.1:${clusterPort}, routes: [${routes}] }
${serverAuthConfig(secrets, join(dir, "jwt"))}`,
      ),
    ),
  );
  return {
    nodes,
    urls: nodes.map((node) => node.url),
    stop: async () => {
      await Promise.all(nodes.map((node) => node.stop()));
    },
  };
}

/**
 * The user JWT a node enrolled before site-scoped subjects holds (subject layout 1: `ef.up.<wid>.>`,
 * `ef.down.<wid>`, `_INBOX.<wid>.>`): what the gateway minted then, for migration tests.
 */
export function layout1NodeUserJwt(
  secrets: TenancySecrets,
  node: { nodeId: string; wid: string; publicKey: string; accountPublicKey: string },
): Promise<string> {
  return encodeUser(
    node.nodeId,
    node.publicKey,
    node.accountPublicKey,
    {
      pub: { allow: [`ef.up.${node.wid}.>`, SITE_CACHE_DIRECT_GET_SUBJECT], deny: [] },
      sub: { allow: [`ef.down.${node.wid}`, `_INBOX.${node.wid}.>`], deny: [] },
      subs: 16,
      payload: -1,
      data: -1,
    },
    { algorithm: Algorithms.v2, signer: keyPairFromSeed(secrets.tenantSigningSeed) },
  );
}
