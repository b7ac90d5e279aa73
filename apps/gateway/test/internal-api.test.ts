import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { parseGatewayEnv } from "../src/env.js";
import { DependencyHealth } from "../src/health/dependency-health.js";
import type { InternalApiDeps } from "../src/http/internal-api.js";
import { createHttpServer } from "../src/http/server.js";
import { createLogger } from "../src/logger.js";
import { createGatewayMetrics } from "../src/metrics.js";

const validEnv = {
  DATABASE_URL: "postgresql://edgefleet@127.0.0.1:25432/edgefleet",
  NATS_URL: "nats://127.0.0.1:14222",
  MIMIR_URL: "http://127.0.0.1:19009",
};

describe("internal API settings", () => {
  it("parses NATS_LEAF_URL as a list and leaves the internal API off by default", () => {
    const env = parseGatewayEnv({ ...validEnv, NATS_LEAF_URL: "nats-leaf://hub-a:7422, tls://hub-b:7422" });
    expect(env.NATS_LEAF_URL).toEqual(["nats-leaf://hub-a:7422", "tls://hub-b:7422"]);
    expect(env.GATEWAY_INTERNAL_TOKEN).toBeUndefined();
  });

  it("refuses a short internal token and a leaf URL that is not one", () => {
    const bad = { ...validEnv, GATEWAY_INTERNAL_TOKEN: "short", NATS_LEAF_URL: "http://hub:7422" };
    expect(() => parseGatewayEnv(bad)).toThrow(/GATEWAY_INTERNAL_TOKEN must be at least 32 characters/);
    expect(() => parseGatewayEnv(bad)).toThrow(/NATS_LEAF_URL must be nats-leaf:\/\/host:port/);
  });
});

describe("internal API switched off or incomplete", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
  });

  async function serve(internal: InternalApiDeps | undefined) {
    const metrics = createGatewayMetrics();
    const logger = createLogger("silent");
    const server = createHttpServer({
      health: new DependencyHealth(logger, metrics.dependencyUp),
      metrics,
      logger,
      isShuttingDown: () => false,
      ...(internal ? { internal } : {}),
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    close = () => new Promise((resolve) => server.close(() => resolve()));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const bundleRequest = (base: string, token: string) =>
    fetch(`${base}/internal/sites/0190a2b4-0000-7000-8000-000000000001/leaf-bundle`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({ organizationId: "0190a2b4-0000-7000-8000-000000000002" }),
    });

  it("answers 503 without GATEWAY_INTERNAL_TOKEN, whatever is sent", async () => {
    const base = await serve(undefined);
    const response = await bundleRequest(base, "x".repeat(40));
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      error: "the internal API is off: GATEWAY_INTERNAL_TOKEN is not set",
    });
  });

  it("answers 503 naming the missing piece when enrollment or NATS_LEAF_URL is not configured", async () => {
    const token = "t".repeat(40);
    const base = await serve({ token, hubLeafUrls: [], createLeafBundle: null, enrollCredentials: null });
    const noSecrets = await bundleRequest(base, token);
    expect(noSecrets.status).toBe(503);
    expect(((await noSecrets.json()) as { error: string }).error).toContain("enrollment is disabled");
    await close?.();
    const base2 = await serve({
      token,
      hubLeafUrls: [],
      createLeafBundle: async () => ({ config: "", creds: "", companions: {}, expiresAt: new Date() }),
      enrollCredentials: "creds",
    });
    const noLeafUrl = await bundleRequest(base2, token);
    expect(noLeafUrl.status).toBe(503);
    expect(((await noLeafUrl.json()) as { error: string }).error).toContain("NATS_LEAF_URL is not set");
  });
});

describe("a CPU profile of the running gateway", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
  });

  it("takes one over the asked seconds, one at a time, behind the internal token", async () => {
    const metrics = createGatewayMetrics();
    const logger = createLogger("silent");
    const token = "p".repeat(40);
    const server = createHttpServer({
      health: new DependencyHealth(logger, metrics.dependencyUp),
      metrics,
      logger,
      isShuttingDown: () => false,
      internal: { token, hubLeafUrls: [], createLeafBundle: null, enrollCredentials: null },
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    close = () => new Promise((resolve) => server.close(() => resolve()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/internal/debug/cpu-profile`;
    const get = (query: string, bearer = token) =>
      fetch(`${base}${query}`, { headers: { authorization: `Bearer ${bearer}` } });

    expect((await get("?seconds=1", "x".repeat(40))).status).toBe(401);
    for (const bad of ["0", "121", "1.5", "abc"]) {
      const refused = await get(`?seconds=${bad}`);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: string }).error).toContain("seconds must be an integer");
    }

    const started = Date.now();
    const first = get("?seconds=1");
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = await get("?seconds=1");
    expect(second.status).toBe(409);
    const response = await first;
    expect(response.status).toBe(200);
    const profile = (await response.json()) as {
      nodes: unknown[];
      samples: number[];
      startTime: number;
      endTime: number;
    };
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(profile.nodes.length).toBeGreaterThan(0);
    expect(profile.endTime - profile.startTime).toBeGreaterThanOrEqual(900_000);
    // The next one may start once the first is done.
    expect((await get("?seconds=1")).status).toBe(200);
  });
});

describe("leaf bundle requests: the site cache", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
  });

  const token = "c".repeat(40);
  async function serveCapturing(asked: unknown[]) {
    const metrics = createGatewayMetrics();
    const logger = createLogger("silent");
    const server = createHttpServer({
      health: new DependencyHealth(logger, metrics.dependencyUp),
      metrics,
      logger,
      isShuttingDown: () => false,
      internal: {
        token,
        hubLeafUrls: ["nats-leaf://hub:7422"],
        createLeafBundle: async (input) => {
          asked.push(input);
          return { config: "", creds: "", companions: {}, expiresAt: new Date(0) };
        },
        enrollCredentials: "creds",
      },
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    close = () => new Promise((resolve) => server.close(() => resolve()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return (body: Record<string, unknown>) =>
      fetch(`${base}/internal/sites/0190a2b4-0000-7000-8000-000000000001/leaf-bundle`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify({ organizationId: "0190a2b4-0000-7000-8000-000000000002", ...body }),
      });
  }

  it("is on by default (the site-leaf CLI's defaults), bounded as asked, or off when null", async () => {
    const asked: Array<{ siteCache: unknown }> = [];
    const bundle = await serveCapturing(asked);
    expect((await bundle({})).status).toBe(200);
    expect((await bundle({ siteCache: { storeDir: "/srv/cache", maxBytes: 32 * 1024 * 1024 } })).status).toBe(
      200,
    );
    expect((await bundle({ siteCache: null })).status).toBe(200);
    expect(asked.map((input) => input.siteCache)).toEqual([
      { storeDir: "/var/lib/edgefleet/site-cache", maxBytes: 4 * 1024 ** 3 },
      { storeDir: "/srv/cache", maxBytes: 32 * 1024 * 1024 },
      null,
    ]);
  });

  it("refuses a cache under 16 MiB, a relative directory or an unknown field with 400 naming it", async () => {
    const asked: unknown[] = [];
    const bundle = await serveCapturing(asked);
    const tooSmall = await bundle({ siteCache: { maxBytes: 1024 } });
    expect(tooSmall.status).toBe(400);
    expect(((await tooSmall.json()) as { error: string }).error).toBe(
      "siteCache.maxBytes: maxBytes must be at least 16777216 (16 MiB)",
    );
    const relative = await bundle({ siteCache: { storeDir: "cache" } });
    expect(((await relative.json()) as { error: string }).error).toContain("siteCache.storeDir");
    const unknown = await bundle({ siteCache: { size: 1 } });
    expect(unknown.status).toBe(400);
    expect(asked).toEqual([]);
  });
});
