import { waitFor } from "@edgefleet/nats-tenancy/testing";
import { afterEach, describe, expect, it } from "vitest";
import { DependencyHealth } from "../src/health/dependency-health.js";
import { describeError, ProbeLoop } from "../src/health/probe-loop.js";
import { createLogger } from "../src/logger.js";
import { createGatewayMetrics } from "../src/metrics.js";

const logger = createLogger("silent");
const loops: ProbeLoop[] = [];

afterEach(async () => {
  await Promise.all(loops.splice(0).map((loop) => loop.stop()));
});

function startLoop(probe: ConstructorParameters<typeof ProbeLoop>[0]["probe"], timeoutMs = 3_000) {
  const metrics = createGatewayMetrics();
  const health = new DependencyHealth(logger, metrics.dependencyUp);
  const loop = new ProbeLoop({ dependency: "postgres", probe, health, logger, intervalMs: 50, timeoutMs });
  loops.push(loop);
  loop.start();
  return { health, metrics };
}

describe("ProbeLoop", () => {
  it("counts a probe that never settles as down after its timeout", async () => {
    // Like a Prisma query to a frozen server: it ignores the abort signal entirely.
    const { health } = startLoop(() => new Promise(() => {}), 100);
    const status = await waitFor("postgres down", async () => {
      const postgres = health.snapshot().postgres;
      return postgres.state === "down" ? postgres : undefined;
    });
    expect(status.lastError).toBe("health check timed out after 100 ms");
  });

  it("goes down and comes back up as the dependency fails and recovers", async () => {
    let failing = true;
    const { health, metrics } = startLoop(async () => {
      if (failing) throw new Error("connection refused");
      return undefined;
    });
    await waitFor("down", async () => (health.snapshot().postgres.state === "down" ? true : undefined));
    expect((await metrics.dependencyUp.get()).values).toContainEqual(
      expect.objectContaining({ labels: { dependency: "postgres" }, value: 0 }),
    );
    failing = false;
    await waitFor("up", async () => (health.snapshot().postgres.state === "up" ? true : undefined));
    expect((await metrics.dependencyUp.get()).values).toContainEqual(
      expect.objectContaining({ labels: { dependency: "postgres" }, value: 1 }),
    );
    expect(health.allUp()).toBe(false); // nats and mimir never reported
  });
});

describe("describeError", () => {
  it("flattens multi-line messages and keeps codes and causes", () => {
    const error = Object.assign(
      new Error("\nInvalid invocation:\n\n  Can't reach server", { cause: "EOF" }),
      {
        code: "P1001",
      },
    );
    expect(describeError(error)).toBe("Invalid invocation: Can't reach server [P1001] (cause: EOF)");
  });
});
