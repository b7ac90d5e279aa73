import { connect } from "node:net";
import { type RunningNats, startPlainHub, waitFor } from "@edgefleet/nats-tenancy/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayProcess, metricValue } from "./support/gateway-process.js";
import { requireTestEnv } from "./support/required-env.js";

// A nats-server of our own that the test can kill, with the shared Postgres and Mimir.
describe("gateway through a NATS outage and shutdown", () => {
  let nats: RunningNats;
  let stackEnv: Record<string, string>;
  const gateways: GatewayProcess[] = [];

  beforeAll(async () => {
    stackEnv = {
      DATABASE_URL: requireTestEnv("DATABASE_URL"),
      MIMIR_URL: requireTestEnv("MIMIR_URL"),
      GATEWAY_HEALTH_INTERVAL_MS: "500",
    };
    // kill() and start() reuse port and store.
    nats = await startPlainHub();
  });

  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.kill()));
    await nats?.stop();
  });

  async function startGateway(overrides: Record<string, string>) {
    const gateway = await GatewayProcess.start({ ...stackEnv, NATS_URL: nats.url, ...overrides });
    gateways.push(gateway);
    return gateway;
  }

  it("reports NATS down while its server is gone, recovers, then exits 0 on SIGTERM", async () => {
    // Generous: a clean shutdown takes well under a second, but a CPU-starved machine can stretch it.
    const shutdownTimeoutMs = 15_000;
    const gateway = await startGateway({ GATEWAY_SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs) });
    await gateway.waitForReadyz(200);

    await nats.kill();
    const down = await gateway.waitForReadyz(503, 10_000);
    expect(down.body.dependencies).toMatchObject({
      nats: { state: "down" },
      postgres: { state: "up" },
      mimir: { state: "up" },
    });
    const metricsWhileDown = await gateway.get("/metrics");
    expect(metricValue(metricsWhileDown.text, 'edgefleet_gateway_dependency_up{dependency="nats"}')).toBe(0);

    await nats.start();
    const up = await gateway.waitForReadyz(200, 20_000);
    expect(up.body.dependencies.nats?.state).toBe("up");
    // The reconnect status event and the health probe race: wait for the log line.
    await waitFor("reconnected log line", async () =>
      gateway.logLines().some((line) => line.msg === "reconnected to NATS") ? true : undefined,
    );

    const signalledAt = Date.now();
    gateway.child.kill("SIGTERM");
    const { code } = await gateway.exited();
    const errors = gateway
      .logLines()
      .filter((line) => ["error", "fatal"].includes(String(line.level)) || line.component === "shutdown");
    expect(code, JSON.stringify(errors)).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(shutdownTimeoutMs);
    expect(gateway.logLines().some((line) => line.msg === "shutdown complete")).toBe(true);
  });

  it("forces exit 1 with a log line when shutdown outlasts GATEWAY_SHUTDOWN_TIMEOUT_MS", async () => {
    const gateway = await startGateway({ GATEWAY_SHUTDOWN_TIMEOUT_MS: "1000" });
    await gateway.waitForReadyz(200);

    // A request whose headers never finish keeps server.close() waiting: a stuck client.
    const port = Number(new URL(gateway.baseUrl).port);
    const stuckClient = connect(port, "127.0.0.1");
    await new Promise((resolve) => stuckClient.once("connect", resolve));
    stuckClient.write("GET /healthz HTTP/1.1\r\nHost: gateway\r\n");

    const signalledAt = Date.now();
    gateway.child.kill("SIGTERM");
    const { code } = await gateway.exited();
    stuckClient.destroy();
    expect(code).toBe(1);
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(1_000);
    expect(
      gateway.logLines().some((line) => line.msg === "shutdown did not finish in time; forcing exit"),
    ).toBe(true);
  });
});
