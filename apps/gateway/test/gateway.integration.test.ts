import { freePort, waitFor } from "@edgefleet/nats-tenancy/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayProcess, metricValue } from "./support/gateway-process.js";
import { requireTestEnv } from "./support/required-env.js";

// Against the shared test stack: the real NATS hub, Postgres and Mimir from var/test/stack.env.
describe("gateway against the real stack", () => {
  let stackEnv: Record<string, string>;
  const gateways: GatewayProcess[] = [];

  beforeAll(() => {
    stackEnv = {
      DATABASE_URL: requireTestEnv("DATABASE_URL"),
      NATS_URL: requireTestEnv("NATS_URL"),
      // The stack's hub runs in operator mode: the gateway speaks as the platform account user.
      NATS_CREDS: requireTestEnv("NATS_CREDS"),
      MIMIR_URL: requireTestEnv("MIMIR_URL"),
      GATEWAY_HEALTH_INTERVAL_MS: "500",
    };
  });

  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.kill()));
  });

  async function startGateway(overrides: Record<string, string> = {}) {
    const gateway = await GatewayProcess.start({ ...stackEnv, ...overrides });
    gateways.push(gateway);
    return gateway;
  }

  it("becomes ready once NATS, Postgres and Mimir answer, and says so in /metrics", async () => {
    const gateway = await startGateway();

    const { body } = await gateway.waitForReadyz(200);
    expect(body.status).toBe("ready");
    for (const dependency of ["nats", "postgres", "mimir"]) {
      expect(body.dependencies[dependency]).toMatchObject({ state: "up", lastError: null });
    }
    expect((await gateway.get("/healthz")).status).toBe(200);
    expect((await gateway.get("/nope")).status).toBe(404);

    const metrics = await gateway.get("/metrics");
    expect(metrics.status).toBe(200);
    for (const dependency of ["nats", "postgres", "mimir"]) {
      expect(metricValue(metrics.text, `edgefleet_gateway_dependency_up{dependency="${dependency}"}`)).toBe(
        1,
      );
    }
    expect(
      metricValue(metrics.text, 'edgefleet_gateway_http_requests_total{route="/readyz",code="200"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metricValue(metrics.text, 'edgefleet_gateway_http_requests_total{route="unmatched",code="404"}'),
    ).toBe(1);
    expect(metrics.text).toMatch(/^edgefleet_gateway_build_info\{version="[^"]+",node_version="v\d+/m);
    expect(metrics.text).toMatch(/^edgefleet_gateway_process_resident_memory_bytes \d+/m);

    // Structured logs: every line is JSON, and components identify themselves.
    const lines = gateway.logLines();
    expect(lines.find((line) => line.msg === "nats is up")).toMatchObject({
      component: "health",
      jetstreamDomain: "hub",
    });
  });

  it("is not ready while Mimir is unreachable, and names Mimir as the reason", async () => {
    const closedPort = await freePort();
    const gateway = await startGateway({ MIMIR_URL: `http://127.0.0.1:${closedPort}` });

    const { status, body } = await waitFor("mimir reported down with the others up", async () => {
      const answer = await gateway.readyz();
      const { nats, postgres, mimir } = answer.body.dependencies;
      return nats?.state === "up" && postgres?.state === "up" && mimir?.state === "down" ? answer : undefined;
    });
    expect(status).toBe(503);
    expect(body.dependencies.mimir?.lastError).toContain("ECONNREFUSED");
    const metrics = await gateway.get("/metrics");
    expect(metricValue(metrics.text, 'edgefleet_gateway_dependency_up{dependency="mimir"}')).toBe(0);
    expect(gateway.logLines().some((line) => line.msg === "waiting for mimir")).toBe(true);
  });
});
