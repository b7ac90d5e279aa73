import { describe, expect, it } from "vitest";
import { connectionConfigFromUrl, requireDatabaseUrl } from "../src/connection";

describe("connectionConfigFromUrl", () => {
  it("splits a URL into pg fields", () => {
    expect(connectionConfigFromUrl("postgresql://edge%40fleet:p%2Fw@127.0.0.1:25432/edgefleet")).toEqual({
      host: "127.0.0.1",
      port: 25432,
      user: "edge@fleet",
      password: "p/w",
      database: "edgefleet",
    });
    expect(connectionConfigFromUrl("postgres://u@db/x")).toMatchObject({
      host: "db",
      port: 5432,
      database: "x",
    });
  });

  it("rejects URLs it cannot use, saying why", () => {
    expect(() => connectionConfigFromUrl("not a url")).toThrow(/not a valid URL/);
    expect(() => connectionConfigFromUrl("mysql://u@h/db")).toThrow(/postgresql:\/\//);
    expect(() => connectionConfigFromUrl("postgresql://u@h/")).toThrow(/database/);
  });

  it("requireDatabaseUrl fails when DATABASE_URL is missing", () => {
    expect(() => requireDatabaseUrl({})).toThrow(/DATABASE_URL is not set/);
  });
});
