import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  agentDownSubject,
  agentUplinkWildcard,
  agentUpSubject,
  type NodeAddress,
  nodeAddressFromJwt,
  nodeInboxPrefix,
  parseAgentUpSubject,
  parsePlatformUpSubject,
  parseSiteToken,
  platformDownSubject,
  platformUpSubject,
  siteToken,
} from "../src/protocol/index.js";

// The native agent reads the same file (apps/agent/protocol/subjects_test.go): both agents find
// the same address in the same credentials and build the same subjects from it.
interface AddressVector {
  name: string;
  jwt: string;
  org: string;
  address: NodeAddress | null;
  subjects?: Record<"hello" | "st" | "uplink" | "down" | "inbox" | "platformHello" | "platformDown", string>;
}
const vectors = JSON.parse(
  readFileSync(new URL("../src/protocol/vectors/nodeAddress.json", import.meta.url), "utf8"),
) as AddressVector[];

describe("a node's address from its credentials", () => {
  it.each(vectors)("$name", (vector) => {
    const address = nodeAddressFromJwt(vector.jwt);
    expect(address).toEqual(vector.address);
    if (!address || !vector.subjects) return;
    expect({
      hello: agentUpSubject(address, "hello"),
      st: agentUpSubject(address, "st"),
      uplink: agentUplinkWildcard(address),
      down: agentDownSubject(address),
      inbox: nodeInboxPrefix(address),
      platformHello: platformUpSubject(vector.org, address, "hello"),
      platformDown: platformDownSubject(vector.org, address),
    }).toEqual(vector.subjects);
  });
});

describe("subjects", () => {
  it("renders and reads site tokens that no wire id can be", () => {
    expect(siteToken(null)).toBe("_");
    expect(siteToken(98n)).toBe("_2q");
    expect(parseSiteToken("_2q")).toBe(98n);
    expect(parseSiteToken("_")).toBeNull();
    for (const notSite of ["2q", "", "__", "_A", "_2q.x"]) expect(parseSiteToken(notSite)).toBeUndefined();
  });

  it("parses both layouts of platform subjects, and nothing else", () => {
    expect(parsePlatformUpSubject("ef.t.a1.up._2q.k3.st")).toEqual({
      org: "a1",
      site: "_2q",
      wid: "k3",
      type: "st",
    });
    expect(parsePlatformUpSubject("ef.t.a1.up.k3.st")).toEqual({
      org: "a1",
      site: null,
      wid: "k3",
      type: "st",
    });
    for (const bad of [
      "ef.t.a1.up.2q.k3.st", // a site token starts with _
      "ef.t.a1.up._2q.k3.zz", // unknown type
      "ef.t.a1.up._2q._k3.st", // a wire id never does
      "ef.t.a1.up.x._2q.k3.st",
      "ef.t.A1.up._2q.k3.st",
      "ef.t.a1.down._2q.k3.st",
    ])
      expect(parsePlatformUpSubject(bad), bad).toBeNull();
    expect(parseAgentUpSubject("ef.up._.k3.hb")).toEqual({ site: "_", wid: "k3", type: "hb" });
    expect(parseAgentUpSubject("ef.up.k3.hb")).toEqual({ site: null, wid: "k3", type: "hb" });
    expect(parseAgentUpSubject("ef.up.2q.k3.hb")).toBeNull();
  });

  it("refuses to build subjects from a malformed address", () => {
    expect(() => agentUpSubject({ wid: "k3", site: "_2q", down: null }, "hb")).toThrow(/both/);
    expect(() => agentUpSubject({ wid: "k3", site: "2q", down: "T6CO1z-tVYcobvGvEJjGqg" }, "hb")).toThrow(
      /site token/,
    );
    expect(() => agentDownSubject({ wid: "k3", site: "_2q", down: "short" })).toThrow(/downlink token/);
  });
});
