/**
 * Alert policies and channels through the API: roles, tenancy (a foreign site), PromQL checked by
 * the real Mimir, webhook URLs refused at input, secrets shown once and never audited, and the
 * alerting revision the gateway's reconciler follows.
 */
import type { Db } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession } from "../src";
import { addMember, ORG, OTHER_ORG } from "./actors";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let alice: ApiSession;
let bob: ApiSession;
let viewer: ApiSession;
let operator: ApiSession;
let acmeSite: string;
let globexSite: string;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  alice = await sessionOf(db, "alice@acme.example");
  bob = await sessionOf(db, "bob@globex.example");
  viewer = await addMember(db, ORG, "viewer", "vic@acme.example");
  operator = await addMember(db, ORG, "operator", "otto@acme.example");
  acmeSite = (await callerFor(db, alice, ORG).site.create({ name: "alert-plant" })).id;
  globexSite = (await callerFor(db, bob, OTHER_ORG).site.create({ name: "globex-plant" })).id;
});

afterAll(async () => {
  await testDb?.drop();
});

/** The field a BAD_REQUEST names (zod's issue path, as REST shows it). */
async function refusedField(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TRPCError);
  expect((error as TRPCError).code).toBe("BAD_REQUEST");
  const cause = (error as TRPCError).cause as
    | { issues?: Array<{ path: Array<string | number> }> }
    | undefined;
  return cause?.issues?.[0]?.path.join(".") ?? "";
}

const revisionOf = async (slug: string) => {
  const org = await db.organization.findUniqueOrThrow({ where: { slug } });
  return (await db.alertingState.findUnique({ where: { organizationId: org.id } }))?.revision ?? 0;
};

describe("alert policies", () => {
  it("an operator creates a preset scoped to a site and a selector; it is audited and bumps the revision", async () => {
    const before = await revisionOf(ORG);
    const policy = await callerFor(db, operator, ORG).alert.createPolicy({
      name: "plant cpu",
      severity: "warning",
      spec: { kind: "cpu_above", thresholdPercent: 90, forMinutes: 5 },
      selector: "tier=canary",
      siteId: acmeSite,
    });
    expect(policy).toMatchObject({ kind: "cpu_above", siteName: "alert-plant", enabled: true });
    expect(await revisionOf(ORG)).toBe(before + 1);
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "alertPolicy.create", targetId: policy.id },
    });
    expect(audit.after).toMatchObject({ name: "plant cpu" });
    expect((await callerFor(db, viewer, ORG).alert.policies()).map((p) => p.name)).toContain("plant cpu");
  });

  it("accepts PromQL that Mimir parses", async () => {
    const policy = await callerFor(db, alice, ORG).alert.createPolicy({
      name: "heartbeat flood",
      severity: "info",
      spec: {
        kind: "promql",
        expr: 'sum(rate(edgefleet_node_control_bytes_total{type="hb"}[5m])) > 1e6',
        forMinutes: 2,
      },
    });
    expect(policy.spec).toMatchObject({ kind: "promql", forMinutes: 2 });
  });

  it("refuses PromQL that does not parse, naming spec.expr, and stores nothing", async () => {
    const count = await db.alertPolicy.count();
    const field = await refusedField(
      callerFor(db, alice, ORG).alert.createPolicy({
        name: "broken",
        severity: "info",
        spec: { kind: "promql", expr: "sum(rate(edgefleet_node_cpu_usage_ratio[5m]", forMinutes: 0 },
      }),
    );
    expect(field).toBe("spec.expr");
    expect(await db.alertPolicy.count()).toBe(count);
  });

  it("refuses another organization's site, naming siteId", async () => {
    expect(
      await refusedField(
        callerFor(db, alice, ORG).alert.createPolicy({
          name: "foreign",
          severity: "critical",
          spec: { kind: "site_offline", forMinutes: 5 },
          siteId: globexSite,
        }),
      ),
    ).toBe("siteId");
  });

  it("refuses a selector that does not parse and a scope on PromQL", async () => {
    const caller = callerFor(db, alice, ORG);
    expect(
      await refusedField(
        caller.alert.createPolicy({
          name: "bad selector",
          severity: "info",
          spec: { kind: "node_offline", forMinutes: 5 },
          selector: "tier in (",
        }),
      ),
    ).toBe("selector");
    expect(
      await refusedField(
        caller.alert.createPolicy({
          name: "scoped promql",
          severity: "info",
          spec: { kind: "promql", expr: "up", forMinutes: 0 },
          siteId: acmeSite,
        }),
      ),
    ).toBe("siteId");
  });

  it("refuses a node selector on a rollout policy (rollouts are scoped by site)", async () => {
    expect(
      await refusedField(
        callerFor(db, alice, ORG).alert.createPolicy({
          name: "paused canary rollouts",
          severity: "warning",
          spec: { kind: "rollout_paused" },
          selector: "tier=canary",
        }),
      ),
    ).toBe("selector");
  });

  it("refuses out-of-range preset parameters, naming them", async () => {
    expect(
      await refusedField(
        callerFor(db, alice, ORG).alert.createPolicy({
          name: "too hot",
          severity: "info",
          spec: { kind: "disk_above", thresholdPercent: 150, forMinutes: 5 },
        }),
      ),
    ).toBe("spec.thresholdPercent");
  });

  it("a viewer cannot create, and another organization cannot see or change a policy", async () => {
    const [policy] = await callerFor(db, alice, ORG).alert.policies();
    if (!policy) throw new Error("no policy");
    await expect(
      callerFor(db, viewer, ORG).alert.createPolicy({
        name: "viewer's",
        severity: "info",
        spec: { kind: "node_offline", forMinutes: 1 },
      }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(callerFor(db, bob, OTHER_ORG).alert.policy({ id: policy.id })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(
      callerFor(db, bob, OTHER_ORG).alert.updatePolicy({ id: policy.id, enabled: false }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect((await callerFor(db, alice, ORG).alert.policy({ id: policy.id })).enabled).toBe(true);
  });

  it("updates and deletes, each audited with before and after", async () => {
    const caller = callerFor(db, operator, ORG);
    const policy = await caller.alert.createPolicy({
      name: "disk",
      severity: "warning",
      spec: { kind: "disk_above", thresholdPercent: 90, forMinutes: 10 },
    });
    const updated = await caller.alert.updatePolicy({
      id: policy.id,
      severity: "critical",
      siteId: acmeSite,
    });
    expect(updated).toMatchObject({ severity: "critical", siteId: acmeSite });
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "alertPolicy.update", targetId: policy.id },
    });
    expect(audit.before).toMatchObject({ severity: "warning" });
    expect(audit.after).toMatchObject({ severity: "critical" });
    await caller.alert.deletePolicy({ id: policy.id });
    await expect(caller.alert.policy({ id: policy.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("a site with policies cannot be deleted (the policy's scope would silently widen)", async () => {
    await expect(callerFor(db, alice, ORG).site.delete({ id: acmeSite })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("alert polic"),
    });
  });
});

describe("alert channels", () => {
  it("an admin creates a webhook; its secret is returned once and not audited", async () => {
    const channel = await callerFor(db, alice, ORG).alert.createChannel({
      kind: "webhook",
      name: "ops hook",
      target: "https://hooks.example.com/edgefleet",
    });
    expect(channel.secret).toMatch(/^whsec_/);
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "alertChannel.create", targetId: channel.id },
    });
    expect(JSON.stringify(audit.after)).not.toContain(channel.secret);
    expect(JSON.stringify(await callerFor(db, alice, ORG).alert.channels())).not.toContain("whsec_");
    const rotated = await callerFor(db, alice, ORG).alert.rotateChannelSecret({ id: channel.id });
    expect(rotated.secret).not.toBe(channel.secret);
    expect(rotated.previousSecretUntil?.getTime()).toBeGreaterThan(Date.now());
  });

  it.each([
    "ftp://hooks.example.com/x",
    "http://127.0.0.1:49009/api/v1/push",
    "http://localhost:8090/internal/leaf",
    "http://169.254.169.254/latest/meta-data",
    "http://[::1]:5432/",
  ])("refuses the webhook URL %s, naming target", async (target) => {
    expect(
      await refusedField(
        callerFor(db, alice, ORG).alert.createChannel({ kind: "webhook", name: `hook ${target}`, target }),
      ),
    ).toBe("target");
  });

  it("an operator cannot add a channel; an e-mail address must be one", async () => {
    await expect(
      callerFor(db, operator, ORG).alert.createChannel({
        kind: "email",
        name: "me",
        target: "otto@acme.example",
      }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(
      await refusedField(
        callerFor(db, alice, ORG).alert.createChannel({ kind: "email", name: "bad", target: "not-mail" }),
      ),
    ).toBe("target");
  });
});
