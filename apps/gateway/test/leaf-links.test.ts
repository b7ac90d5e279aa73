import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { readLeafLinks } from "../src/sites/leaf-links.js";

// A hub cluster (docs/ha.md): a site's leaf links to any of its nodes, so its uplink is read from
// every node's /leafz, not the first one's alone.

const servers: Server[] = [];
afterAll(() => {
  for (const server of servers) server.close();
});

async function monitor(leafs: Array<{ name: string; in_bytes: number; out_bytes: number }>): Promise<string> {
  const server = createServer((_, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ now: new Date().toISOString(), leafs }));
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
});
