import { describe, expect, it } from "vitest";
import {
  inlineParameters,
  parseParameters,
  parseStatementLog,
  statementProfile,
} from "../src/console/explain.js";

const LOG = [
  "2026-11-21 16:28:22.318 UTC [26742] edgefleet LOG:  duration: 0.899 ms  parse <unnamed>: SELECT 1",
  "2026-11-21 16:28:22.323 UTC [26742] edgefleet LOG:  duration: 12.5 ms  execute <unnamed>: SELECT n.id",
  "\tFROM node n",
  "\tWHERE n.organization_id = $1::uuid AND n.name = $2 LIMIT $10",
  "2026-11-21 16:28:22.323 UTC [26742] edgefleet DETAIL:  parameters: $1 = 'a', $2 = 'it''s, ok', $10 = '101'",
  "2026-11-21 16:28:22.400 UTC [26800] keycloak LOG:  duration: 1.0 ms  execute S_1: select * from REALM",
  "2026-11-21 16:28:22.500 UTC [26742] edgefleet LOG:  duration: 3.0 ms  statement: SELECT count(*) FROM node",
  "2026-11-21 16:28:22.600 UTC [16218] LOG:  received SIGHUP, reloading configuration files",
].join("\n");

describe("statement capture from the Postgres log", () => {
  it("reads executed statements with their database, duration, multi-line SQL and parameters", () => {
    const statements = parseStatementLog(LOG);
    expect(statements).toHaveLength(3);
    expect(statements[0]).toEqual({
      database: "edgefleet",
      durationMs: 12.5,
      sql: "SELECT n.id\n\tFROM node n\n\tWHERE n.organization_id = $1::uuid AND n.name = $2 LIMIT $10",
      params: [
        "'a'",
        "'it''s, ok'",
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        "'101'",
      ],
    });
    expect(statements[1]?.database).toBe("keycloak");
    expect(statements[2]).toMatchObject({ durationMs: 3, sql: "SELECT count(*) FROM node", params: [] });
  });

  it("reads the default log prefix (no database) too", () => {
    const [statement] = parseStatementLog(
      "2026-11-21 16:28:22.323 UTC [26742] LOG:  duration: 3.408 ms  execute <unnamed>: select 1",
    );
    expect(statement).toMatchObject({ database: "", durationMs: 3.408, sql: "select 1" });
  });

  it("parses parameter lists with quotes, commas and NULL", () => {
    expect(parseParameters("$1 = 'x', $2 = NULL, $3 = 'a''b,c'")).toEqual(["'x'", "NULL", "'a''b,c'"]);
  });

  it("inlines $10 as the tenth parameter, not $1 followed by 0", () => {
    const params = ["'one'", ...Array(8).fill("'x'"), "'ten'"];
    expect(inlineParameters("SELECT $1, $10, $11", params)).toBe("SELECT 'one', 'ten', $11");
  });

  it("profiles statements per request, the most time first", () => {
    const statements = [
      { database: "d", durationMs: 1, sql: "A", params: [] },
      { database: "d", durationMs: 1, sql: "A", params: [] },
      { database: "d", durationMs: 50, sql: "B", params: ["'p'"] },
      { database: "d", durationMs: 30, sql: "B", params: ["'q'"] },
    ];
    const profile = statementProfile(statements, 2);
    expect(profile.map((p) => p.sql)).toEqual(["B", "A"]);
    expect(profile[0]).toMatchObject({ callsPerRequest: 1, meanMs: 40, maxMs: 50 });
    expect(profile[0]?.slowest.params).toEqual(["'p'"]);
  });
});
