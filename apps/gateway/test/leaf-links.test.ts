import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { readLeafLinks, readLeafz } from "../src/sites/leaf-links.js";

// A hub cluster (docs/ha.md): a site's leaf links to any of its nodes, so its uplink is read from
// every node's /leafz, not the first one's alone.

const servers: Server[] = [];
afterAll(() => {
  for (const server of servers) server.close();
});

async function monitor(
  leafs: Array<{ id?: number; name: string; in_bytes: number; out_bytes: number }>,
  serverId?: string,
): Promise<string> {
  const server = createServer((_, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ server_id: serverId, now: new Date().toISOString(), leafs }));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("site uplinks on a hub cluster", () => {
  it("add up a leaf's links on every node", async () => {
    const first = await monitor([{ name: "acme-plant-7", in_bytes: 10, out_bytes: 100 }]);
    const second = await monitor([
      { name: "acme-plant-7", in_bytes: 1, out_bytes: 1_000 },
      { name: "acme-depot", in_bytes: 5, out_bytes: 50 },
    ]);
    const links = await readLeafLinks([first, second]);
    expect(links.get("acme-plant-7")).toEqual({ downBytes: 1_100, upBytes: 11 });
    expect(links.get("acme-depot")).toEqual({ downBytes: 50, upBytes: 5 });
    expect((await readLeafLinks(first)).get("acme-depot")).toBeUndefined();
  });

  it("keeps each node's connections apart for the uplink meter (connection ids are per server)", async () => {
    // Both nodes number their connections from 1: merged by id alone, one would hide the other and
    // the meter (nextUplinkUse) would read a counter going back.
    const first = await monitor([{ id: 1, name: "acme-plant-7", in_bytes: 0, out_bytes: 100 }], "NA");
    const second = await monitor([{ id: 1, name: "acme-plant-7", in_bytes: 0, out_bytes: 7 }], "NB");
    const reading = await readLeafz([first, second]);
    expect(reading.connections.get("acme-plant-7")).toEqual({ "NA/1": 100, "NB/1": 7 });
    // One server (the default stack): plain ids, as rows stored before clusters have them.
    expect((await readLeafz(first)).connections.get("acme-plant-7")).toEqual({ "1": 100 });
  });
});
