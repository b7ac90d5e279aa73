import { freePort } from "@edgefleet/nats-tenancy/testing";
import { describe, expect, it } from "vitest";
import { GatewayProcess } from "./support/gateway-process.js";

describe("gateway startup with a bad environment", () => {
  it("exits 1 naming the bad variables, before connecting to anything", async () => {
    // A NATS URL nobody listens on: any connection attempt would show up as a log line.
    const unusedPort = await freePort();
    const gateway = await GatewayProcess.start({
      DATABASE_URL: "postgresql://edgefleet@127.0.0.1:1/edgefleet",
      NATS_URL: `nats://127.0.0.1:${unusedPort}`,
      MIMIR_URL: "ftp://127.0.0.1:1",
      GATEWAY_HTTP_PORT: "not-a-port",
    });
    try {
      const { code } = await gateway.exited();
      expect(code).toBe(1);
      const output = gateway.output.join("");
      expect(output).toContain("Invalid gateway environment");
      expect(output).toContain("GATEWAY_HTTP_PORT must be an integer");
      expect(output).toContain("MIMIR_URL must be a URL starting with http:// or https://");
      expect(output).not.toMatch(/waiting for|HTTP listening/);
    } finally {
      await gateway.kill();
    }
  });
});
