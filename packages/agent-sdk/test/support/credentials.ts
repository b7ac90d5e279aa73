import { createHash } from "node:crypto";
import { createUser } from "@nats-io/nkeys";
import type { NodeCredentials } from "../../src/agent/agent.js";
import { agentUpSubject, type NodeAddress, type UpType } from "../../src/protocol/index.js";

/** The site token of the tests' nodes (the test server has no auth: any credentials connect). */
export const TEST_SITE = "_t";

/** The address the test credentials of a node name (a downlink token derived from its name). */
export function testAddress(wid: string, site = TEST_SITE): NodeAddress {
  const down = createHash("sha256").update(`${site}.${wid}`).digest().subarray(0, 16).toString("base64url");
  return { wid, site, down };
}

/**
 * A node user JWT with the permissions the gateway's credentials carry (subject layout 2), or layout
 * 1's (`site: null`). Unsigned: the test server checks nothing, the agent reads the permissions.
 */
export function testNodeJwt(wid: string, site: string | null = TEST_SITE): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const allow =
    site === null
      ? { pub: [`ef.up.${wid}.>`], sub: [`ef.down.${wid}`, `_INBOX.${wid}.>`] }
      : (() => {
          const address = testAddress(wid, site);
          return {
            pub: [`ef.up.${site}.${wid}.>`],
            sub: [`ef.down.${site}.${wid}.${address.down}`, `_INBOX.${site}.${wid}.>`],
          };
        })();
  return `${part({ typ: "JWT", alg: "ed25519-nkey" })}.${part({
    sub: `node-${wid}`,
    nats: { pub: { allow: allow.pub }, sub: { allow: allow.sub }, type: "user", version: 2 },
  })}.dGVzdA`;
}

export function testCredentials(wid: string, site: string | null = TEST_SITE): NodeCredentials {
  return { jwt: testNodeJwt(wid, site), seed: new TextDecoder().decode(createUser().getSeed()) };
}

/** A test node's up subject. */
export function testUp(wid: string, type: UpType, site = TEST_SITE): string {
  return agentUpSubject(testAddress(wid, site), type);
}
