/**
 * The Alerts page's API against the real Mimir Alertmanager (tenant = organization): alerts
 * firing now with node and site names, silences for a site or a node (roles, foreign ids,
 * bad input, another organization can neither see nor expire them), the silenced alert shown
 * as such, and quiet hours per site (validated, audited, bumping the alerting revision).
 */
import type { Db } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession } from "../src";
import { silenceMatches } from "../src/domain/alert-firing";
import { addMember, ORG, OTHER_ORG } from "./actors";
import { configureAlertmanager } from "./alertmanager-tenant";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

const mimirUrl = process.env.MIMIR_URL;

let testDb: TestDatabase;
let db: Db;
let alice: ApiSession;
let bob: ApiSession;
let viewer: ApiSession;
let operator: ApiSession;
let acmeId: string;
let site: { id: string; name: string };
let node: { id: string; name: string };
let globexSite: string;
let globexNode: string;

/** Posts an alert straight into the organization's Alertmanager, as the ruler would. */
async function fire(organizationId: string, labels: Record<string, string>) {
  const response = await fetch(new URL("/alertmanager/api/v2/alerts", mimirUrl), {
    method: "POST",
    headers: { "X-Scope-OrgID": organizationId, "Content-Type": "application/json" },
    body: JSON.stringify([
      {
        labels: {
          alertname: "EdgefleetNodeOffline",
          organization: organizationId,
          severity: "critical",
          ...labels,
        },
        annotations: { summary: "node is offline", policy_name: "test node down" },
        startsAt: new Date().toISOString(),
        endsAt: new Date(Date.now() + 600_000).toISOString(),
      },
    ]),
  });
  expect(response.status).toBe(200);
}

async function refusal(call: Promise<unknown>): Promise<{ code: string; field: string }> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TRPCError);
  const cause = (error as TRPCError).cause as
    | { issues?: Array<{ path: Array<string | number> }> }
    | undefined;
  return { code: (error as TRPCError).code, field: cause?.issues?.[0]?.path.join(".") ?? "" };
}

beforeAll(async () => {
  if (!mimirUrl) throw new Error("MIMIR_URL must be set (source var/<profile>/stack.env)");
  testDb = await createTestDatabase();
  db = testDb.db;
  alice = await sessionOf(db, "alice@acme.example");
  bob = await sessionOf(db, "bob@globex.example");
  viewer = await addMember(db, ORG, "viewer", "vic-silences@acme.example");
  operator = await addMember(db, ORG, "operator", "otto-silences@acme.example");
  const acme = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
  const globex = await db.organization.findUniqueOrThrow({ where: { slug: OTHER_ORG } });
  acmeId = acme.id;
  await configureAlertmanager(mimirUrl, acme.id);
  site = await callerFor(db, alice, ORG).site.create({ name: "silence-plant", timeZone: "Europe/Berlin" });
  node = await db.node.create({
    data: { organizationId: acme.id, name: "silence-node-1", status: "offline", siteId: site.id },
    select: { id: true, name: true },
  });
  globexSite = (await callerFor(db, bob, OTHER_ORG).site.create({ name: "globex-silence-plant" })).id;
  globexNode = (
    await db.node.create({
      data: { organizationId: globex.id, name: "globex-silence-node", status: "online" },
    })
  ).id;
});

afterAll(async () => {
  await testDb?.drop();
});

describe("alerts firing now", () => {
  it("lists the organization's firing alerts with node and site names; another organization sees none of them", async () => {
    await fire(acmeId, { node: node.id, site_id: site.id, site: site.name, policy: "p-test" });
    const firing = await callerFor(db, viewer, ORG).alert.firing();
    const alert = firing.find((a) => a.nodeId === node.id);
    expect(alert).toMatchObject({
      state: "active",
      name: "test node down",
      severity: "critical",
      nodeName: "silence-node-1",
      siteName: "silence-plant",
      summary: "node is offline",
    });
    const theirs = await callerFor(db, bob, OTHER_ORG).alert.firing();
    expect(theirs.some((a) => a.nodeId === node.id)).toBe(false);
  });
});

describe("silences", () => {
  it("an operator silences a node: listed, audited, and its firing alert shows as silenced", async () => {
    const silence = await callerFor(db, operator, ORG).alert.createSilence({
      nodeId: node.id,
      durationMinutes: 60,
      comment: "swapping the disk",
    });
    expect(silence).toMatchObject({
      state: "active",
      target: "node",
      targetId: node.id,
      targetName: "silence-node-1",
      comment: "swapping the disk",
      createdBy: "otto-silences@acme.example",
    });
    // Alertmanager moves a start in the past to its own now: the hour is measured from the request.
    const length = silence.endsAt.getTime() - silence.startsAt.getTime();
    expect(length).toBeGreaterThan(3_590_000);
    expect(length).toBeLessThanOrEqual(3_600_000);
    const listed = await callerFor(db, viewer, ORG).alert.silences();
    expect(listed.map((s) => s.id)).toContain(silence.id);
    const alert = (await callerFor(db, viewer, ORG).alert.firing()).find((a) => a.nodeId === node.id);
    expect(alert).toMatchObject({ state: "silenced", silencedBy: [silence.id] });
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "alertSilence.create", targetId: silence.id },
    });
    expect(audit.after).toMatchObject({ targetName: "silence-node-1" });

    // Expired: listed as such, and the alert is active again.
    const expired = await callerFor(db, operator, ORG).alert.expireSilence({ id: silence.id });
    expect(expired.state).toBe("expired");
    const again = (await callerFor(db, viewer, ORG).alert.firing()).find((a) => a.nodeId === node.id);
    expect(again?.state).toBe("active");
    expect(await db.auditLog.count({ where: { action: "alertSilence.expire", targetId: silence.id } })).toBe(
      1,
    );
    expect((await refusal(callerFor(db, operator, ORG).alert.expireSilence({ id: silence.id }))).code).toBe(
      "CONFLICT",
    );
  });

  it("silences a site by its id", async () => {
    const silence = await callerFor(db, alice, ORG).alert.createSilence({
      siteId: site.id,
      durationMinutes: 30,
    });
    expect(silence).toMatchObject({ target: "site", targetName: "silence-plant", state: "active" });
    expect(silence.comment).toMatch(/30 min/);
  });

  it("a viewer cannot silence", async () => {
    expect(
      (
        await refusal(
          callerFor(db, viewer, ORG).alert.createSilence({ nodeId: node.id, durationMinutes: 10 }),
        )
      ).code,
    ).toBe("FORBIDDEN");
  });

  it("refuses another organization's site or node, naming the field, and creates nothing", async () => {
    const before = (await callerFor(db, alice, ORG).alert.silences()).length;
    expect(
      await refusal(
        callerFor(db, alice, ORG).alert.createSilence({ siteId: globexSite, durationMinutes: 10 }),
      ),
    ).toEqual({ code: "BAD_REQUEST", field: "siteId" });
    expect(
      await refusal(
        callerFor(db, alice, ORG).alert.createSilence({ nodeId: globexNode, durationMinutes: 10 }),
      ),
    ).toEqual({ code: "BAD_REQUEST", field: "nodeId" });
    expect((await callerFor(db, alice, ORG).alert.silences()).length).toBe(before);
  });

  it("refuses bad input: no target, both targets, a zero or over-long duration", async () => {
    const caller = callerFor(db, alice, ORG);
    expect((await refusal(caller.alert.createSilence({ durationMinutes: 10 }))).field).toBe("siteId");
    expect(
      (await refusal(caller.alert.createSilence({ siteId: site.id, nodeId: node.id, durationMinutes: 10 })))
        .field,
    ).toBe("siteId");
    expect((await refusal(caller.alert.createSilence({ siteId: site.id, durationMinutes: 0 }))).field).toBe(
      "durationMinutes",
    );
    expect(
      (await refusal(caller.alert.createSilence({ siteId: site.id, durationMinutes: 7 * 24 * 60 + 1 })))
        .field,
    ).toBe("durationMinutes");
  });

  it("another organization can neither see nor expire a silence", async () => {
    const silence = await callerFor(db, alice, ORG).alert.createSilence({
      nodeId: node.id,
      durationMinutes: 5,
    });
    expect((await callerFor(db, bob, OTHER_ORG).alert.silences()).map((s) => s.id)).not.toContain(silence.id);
    expect((await refusal(callerFor(db, bob, OTHER_ORG).alert.expireSilence({ id: silence.id }))).code).toBe(
      "NOT_FOUND",
    );
    const still = (await callerFor(db, alice, ORG).alert.silences()).find((s) => s.id === silence.id);
    expect(still?.state).toBe("active");
  });
});

describe("quiet hours", () => {
  const revision = async () =>
    (await db.alertingState.findUnique({ where: { organizationId: acmeId } }))?.revision ?? 0;

  it("an operator sets quiet hours in the site's zone: listed, audited, revision bumped; clearing works", async () => {
    const before = await revision();
    const set = await callerFor(db, operator, ORG).alert.setQuietHours({
      siteId: site.id,
      quietHours: { start: "22:00", end: "06:30" },
    });
    expect(set).toEqual({
      siteId: site.id,
      siteName: "silence-plant",
      timeZone: "Europe/Berlin",
      quietHours: { start: "22:00", end: "06:30" },
    });
    expect(await revision()).toBe(before + 1);
    const listed = await callerFor(db, viewer, ORG).alert.quietHours();
    expect(listed.find((s) => s.siteId === site.id)?.quietHours).toEqual({ start: "22:00", end: "06:30" });
    expect(await db.auditLog.count({ where: { action: "site.setQuietHours", targetId: site.id } })).toBe(1);

    // The site's zone changes: the generated config changes with it.
    await callerFor(db, alice, ORG).site.update({ id: site.id, timeZone: "America/Chicago" });
    expect(await revision()).toBe(before + 2);

    const cleared = await callerFor(db, operator, ORG).alert.setQuietHours({
      siteId: site.id,
      quietHours: null,
    });
    expect(cleared.quietHours).toBeNull();
    expect(await revision()).toBe(before + 3);
  });

  it("refuses times that are not HH:MM and equal ends, naming the field; a viewer and a foreign site are refused", async () => {
    const caller = callerFor(db, alice, ORG);
    expect(
      (
        await refusal(
          caller.alert.setQuietHours({ siteId: site.id, quietHours: { start: "25:00", end: "06:00" } }),
        )
      ).field,
    ).toBe("quietHours.start");
    expect(
      (
        await refusal(
          caller.alert.setQuietHours({ siteId: site.id, quietHours: { start: "06:00", end: "06:00" } }),
        )
      ).field,
    ).toBe("quietHours.end");
    expect(
      (
        await refusal(
          callerFor(db, viewer, ORG).alert.setQuietHours({
            siteId: site.id,
            quietHours: { start: "22:00", end: "06:00" },
          }),
        )
      ).code,
    ).toBe("FORBIDDEN");
    expect(
      (
        await refusal(
          caller.alert.setQuietHours({ siteId: globexSite, quietHours: { start: "22:00", end: "06:00" } }),
        )
      ).code,
    ).toBe("NOT_FOUND");
    const globex = await db.site.findUniqueOrThrow({ where: { id: globexSite } });
    expect(globex.quietHoursStart).toBeNull();
  });
});

describe("history", () => {
  it("lists the outbox newest first with the channel, and only the caller's organization's", async () => {
    const channel = await callerFor(db, alice, ORG).alert.createChannel({
      kind: "email",
      name: "history-mail",
      target: "ops@acme.example",
    });
    await db.alertNotification.create({
      data: {
        organizationId: acmeId,
        channelId: channel.id,
        idempotencyKey: "fp:firing:1",
        alertStatus: "firing",
        alert: {
          labels: { severity: "critical" },
          annotations: { summary: "plant down", policy_name: "plant policy" },
          startsAt: new Date().toISOString(),
        },
        state: "delivered",
        deliveredAt: new Date(),
      },
    });
    const history = await callerFor(db, viewer, ORG).alert.history({ limit: 10 });
    expect(history[0]).toMatchObject({
      name: "plant policy",
      summary: "plant down",
      severity: "critical",
      channelName: "history-mail",
      channelKind: "email",
      state: "delivered",
      alertStatus: "firing",
    });
    expect(await callerFor(db, bob, OTHER_ORG).alert.history({ limit: 10 })).toEqual([]);
  });
});

describe("silence matchers", () => {
  it("follow Alertmanager's rules: anchored regexes, negation, a missing label is empty", () => {
    const labels = { node: "n-1", site_id: "s-1" };
    expect(silenceMatches([{ name: "node", value: "n-1", isRegex: false, isEqual: true }], labels)).toBe(
      true,
    );
    expect(silenceMatches([{ name: "node", value: "n-", isRegex: true, isEqual: true }], labels)).toBe(false);
    expect(silenceMatches([{ name: "node", value: "n-.*", isRegex: true }], labels)).toBe(true);
    expect(silenceMatches([{ name: "node", value: "n-1", isRegex: false, isEqual: false }], labels)).toBe(
      false,
    );
    expect(silenceMatches([{ name: "rollout", value: "", isRegex: false, isEqual: true }], labels)).toBe(
      true,
    );
    expect(
      silenceMatches(
        [
          { name: "node", value: "n-1", isRegex: false, isEqual: true },
          { name: "site_id", value: "s-2", isRegex: false, isEqual: true },
        ],
        labels,
      ),
    ).toBe(false);
  });
});
