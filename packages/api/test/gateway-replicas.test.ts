import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { freePort } from "@edgefleet/nats-tenancy/testing";
import { afterEach, describe, expect, it } from "vitest";
import { fetchEnrollCredentials, gatewayUrls, runNodeCommand } from "../src/gateway-client";
import { type GatewayStandIn, STAND_IN_ENROLL_CREDS, startGatewayStandIn } from "./gateway-stand-in";

// The console's API with several gateway replicas (GATEWAY_URL comma-separated, docs/ha.md): a
// replica that cannot be reached is skipped, later calls start from the one that answered, and a
// request that may have reached a gateway is never sent to another.

const SECRET = "s".repeat(40);
let standIns: GatewayStandIn[] = [];
afterEach(async () => {
  await Promise.all(standIns.map((standIn) => standIn.close()));
  standIns = [];
});

describe("gateway replicas", () => {
  it("skip a replica that refuses connections and stay with the one that answered", async () => {
    const live = await startGatewayStandIn(SECRET);
    standIns.push(live);
    const down = `http://127.0.0.1:${await freePort()}`;
    const gateway = { url: down, otherUrls: [live.connection.url], internalToken: SECRET };

    expect(await fetchEnrollCredentials(gateway)).toBe(STAND_IN_ENROLL_CREDS);
    expect(live.received).toHaveLength(1);
    expect(gatewayUrls(gateway)).toEqual([live.connection.url, down]);
  });

  it("never send a request that may have reached a gateway to another one", async () => {
    const second = await startGatewayStandIn(SECRET);
    standIns.push(second);
    // A gateway that takes the request and dies before answering (its socket reset).
    const dying = createServer((req) => req.socket.destroy());
    dying.listen(0, "127.0.0.1");
    await new Promise((resolve) => dying.once("listening", resolve));
    const gateway = {
      url: `http://127.0.0.1:${(dying.address() as AddressInfo).port}`,
      otherUrls: [second.connection.url],
      internalToken: SECRET,
    };
    try {
      await expect(
        runNodeCommand(gateway, {
          organizationId: "00000000-0000-7000-8000-000000000001",
          nodeIds: ["00000000-0000-7000-8000-000000000002"],
          cmd: "restart",
          app: "web",
          timeoutMs: 1_000,
        }),
      ).rejects.toMatchObject({ code: "SERVICE_UNAVAILABLE" });
      expect(second.received).toHaveLength(0);
    } finally {
      dying.close();
    }
  });

  it("answer SERVICE_UNAVAILABLE when no replica can be reached", async () => {
    const gateway = {
      url: `http://127.0.0.1:${await freePort()}`,
      otherUrls: [`http://127.0.0.1:${await freePort()}`],
      internalToken: SECRET,
    };
    await expect(fetchEnrollCredentials(gateway)).rejects.toMatchObject({ code: "SERVICE_UNAVAILABLE" });
  });
});
