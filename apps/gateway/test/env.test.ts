import { describe, expect, it } from "vitest";
import { GatewayEnvError, parseGatewayEnv } from "../src/env.js";

const validEnv = {
  DATABASE_URL: "postgresql://edgefleet@127.0.0.1:25432/edgefleet",
  NATS_URL: "nats://127.0.0.1:14222",
  MIMIR_URL: "http://127.0.0.1:19009",
};

function problemsOf(env: Record<string, string | undefined>): readonly string[] {
  try {
    parseGatewayEnv(env);
  } catch (error) {
    if (error instanceof GatewayEnvError) return error.problems;
    throw error;
  }
  throw new Error("expected the environment to be rejected");
}

describe("parseGatewayEnv", () => {
  it("applies the documented defaults", () => {
    const env = parseGatewayEnv(validEnv);
    expect(env.GATEWAY_HTTP_PORT).toBe(8090);
    expect(env.GATEWAY_HTTP_HOST).toBe("127.0.0.1");
    expect(env.LOG_LEVEL).toBe("info");
    expect(env.GATEWAY_SHUTDOWN_TIMEOUT_MS).toBe(10_000);
    expect(env.NATS_URL).toEqual(["nats://127.0.0.1:14222"]);
  });

  it("parses numbers and a comma-separated NATS server list", () => {
    const env = parseGatewayEnv({
      ...validEnv,
      NATS_URL: "nats://a:4222, nats://b:4222",
      GATEWAY_HTTP_PORT: "18090",
      GATEWAY_SHUTDOWN_TIMEOUT_MS: "2500",
    });
    expect(env.NATS_URL).toEqual(["nats://a:4222", "nats://b:4222"]);
    expect(env.GATEWAY_HTTP_PORT).toBe(18090);
    expect(env.GATEWAY_SHUTDOWN_TIMEOUT_MS).toBe(2500);
  });

  it("leaves the alert timing overrides unset unless given, so the per-severity timings apply", () => {
    const env = parseGatewayEnv(validEnv);
    expect(env.GATEWAY_ALERT_GROUP_WAIT_S).toBeUndefined();
    expect(env.GATEWAY_ALERT_GROUP_INTERVAL_S).toBeUndefined();
    const overridden = parseGatewayEnv({
      ...validEnv,
      GATEWAY_ALERT_GROUP_WAIT_S: "0",
      GATEWAY_ALERT_GROUP_INTERVAL_S: "5",
    });
    expect(overridden.GATEWAY_ALERT_GROUP_WAIT_S).toBe(0);
    expect(overridden.GATEWAY_ALERT_GROUP_INTERVAL_S).toBe(5);
    expect(problemsOf({ ...validEnv, GATEWAY_ALERT_GROUP_INTERVAL_S: "0" })).toEqual([
      "GATEWAY_ALERT_GROUP_INTERVAL_S must be between 1 and 86400",
    ]);
  });

  it("treats an empty value as unset, so the default applies", () => {
    expect(parseGatewayEnv({ ...validEnv, GATEWAY_HTTP_PORT: "" }).GATEWAY_HTTP_PORT).toBe(8090);
  });

  it.each([
    ["not a number", "abc", "GATEWAY_HTTP_PORT must be an integer"],
    ["out of range", "70000", "GATEWAY_HTTP_PORT must be between 1 and 65535"],
    ["zero", "0", "GATEWAY_HTTP_PORT must be between 1 and 65535"],
    ["fractional", "80.5", "GATEWAY_HTTP_PORT must be an integer"],
  ])("rejects a port that is %s", (_case, port, message) => {
    expect(problemsOf({ ...validEnv, GATEWAY_HTTP_PORT: port })).toEqual([message]);
  });

  it("names every missing URL", () => {
    expect(problemsOf({})).toEqual([
      "DATABASE_URL is required",
      "NATS_URL is required",
      "MIMIR_URL is required",
    ]);
  });

  it("rejects URLs with the wrong scheme without echoing their value", () => {
    const problems = problemsOf({
      DATABASE_URL: "mysql://secret-password@db/edgefleet",
      NATS_URL: "http://127.0.0.1:4222",
      MIMIR_URL: "127.0.0.1:9009",
    });
    expect(problems).toEqual([
      "DATABASE_URL must be a URL starting with postgresql:// or postgres://",
      "NATS_URL must be nats://host:port or tls://host:port (comma-separated for several servers)",
      "MIMIR_URL must be a URL starting with http:// or https://",
    ]);
    expect(problems.join("\n")).not.toContain("secret-password");
  });

  it("rejects an unknown log level and a too-short shutdown timeout", () => {
    expect(problemsOf({ ...validEnv, LOG_LEVEL: "loud", GATEWAY_SHUTDOWN_TIMEOUT_MS: "5" })).toEqual([
      "LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent",
      "GATEWAY_SHUTDOWN_TIMEOUT_MS must be between 100 and 600000",
    ]);
  });

  it("puts every problem in the error message", () => {
    expect(() => parseGatewayEnv({ ...validEnv, GATEWAY_HTTP_PORT: "abc" })).toThrow(
      /Invalid gateway environment:\n {2}- GATEWAY_HTTP_PORT must be an integer/,
    );
  });
});
