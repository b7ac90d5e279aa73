import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectionConfigFromUrl } from "../src/connection";
import {
  DESIRED_REVISION_CHANNEL,
  DesiredStateError,
  desiredDeltaSince,
  setDesiredApps,
} from "../src/desired-state";
import { createMigratedDatabase, type TestDatabase } from "./support/test-database";

let database: TestDatabase;
let org: { id: string };
let other: { id: string };
let nodeId: string;
const versions: Record<string, { id: string; appId: string }> = {};

beforeAll(async () => {
  database = await createMigratedDatabase();
  const db = database.db;
  org = await db.organization.create({ data: { slug: "desired-a", name: "A" } });
  other = await db.organization.create({ data: { slug: "desired-b", name: "B" } });
  nodeId = (await db.node.create({ data: { organizationId: org.id, name: "n1" } })).id;
  for (const [appName, version] of [
    ["web", "1.0"],
    ["web", "2.0"],
    ["db", "1.0"],
    ["cache", "1.0"],
  ] as const) {
    const app = await db.app.upsert({
      where: { organizationId_name: { organizationId: org.id, name: appName } },
      create: { organizationId: org.id, name: appName },
      update: {},
    });
    const row = await db.appVersion.create({
      data: {
        organizationId: org.id,
        appId: app.id,
        version,
        artifactUrl: `https://a.test/${appName}-${version}`,
        runSpec: { command: [appName] },
      },
    });
    versions[`${appName}@${version}`] = { id: row.id, appId: app.id };
  }
});
afterAll(async () => {
  await database?.drop();
});

const v = (key: string) => {
  const version = versions[key];
  if (!version) throw new Error(`no version ${key}`);
  return version;
};

describe("desired state", () => {
  it("stamps each change as one revision and returns only what changed after a revision", async () => {
    const db = database.db;
    expect(await desiredDeltaSince(db, nodeId, 0)).toBeNull();

    const first = await setDesiredApps(db, org.id, nodeId, { put: [v("web@1.0").id, v("db@1.0").id] });
    expect(first).toEqual({ revision: 1, changed: true });
    const second = await setDesiredApps(db, org.id, nodeId, { put: [v("web@2.0").id, v("db@1.0").id] });
    expect(second).toEqual({ revision: 2, changed: true });
    const third = await setDesiredApps(db, org.id, nodeId, {
      put: [v("cache@1.0").id],
      del: [v("db@1.0").appId],
    });
    expect(third).toEqual({ revision: 3, changed: true });

    expect(await desiredDeltaSince(db, nodeId, 3)).toBeNull();
    const sinceTwo = await desiredDeltaSince(db, nodeId, 2);
    expect(sinceTwo).toMatchObject({ from: 2, to: 3, del: ["db"] });
    expect(sinceTwo?.put.map((spec) => `${spec.app}@${spec.version}`)).toEqual(["cache@1.0"]);
    const sinceOne = await desiredDeltaSince(db, nodeId, 1);
    expect(sinceOne?.put.map((spec) => `${spec.app}@${spec.version}`)).toEqual(["cache@1.0", "web@2.0"]);
    expect(sinceOne?.del).toEqual(["db"]);
    expect(sinceOne?.put[1]).toEqual({
      app: "web",
      version: "2.0",
      artifactUrl: "https://a.test/web-2.0",
      artifactSha256: null,
      runSpec: { command: ["web"] },
    });
    // Revision 0 is the whole state; removals of apps it never had are harmless deletes.
    const all = await desiredDeltaSince(db, nodeId, 0);
    expect(all?.put.map((spec) => spec.app)).toEqual(["cache", "web"]);
    // A revision the control plane never issued: everything, from 0.
    expect(await desiredDeltaSince(db, nodeId, 99)).toMatchObject({ from: 0, to: 3 });
  });

  it("uses no revision when nothing differs, and re-adding an app clears its tombstone", async () => {
    const db = database.db;
    const same = await setDesiredApps(db, org.id, nodeId, {
      put: [v("web@2.0").id],
      del: [v("db@1.0").appId],
    });
    expect(same).toEqual({ revision: 3, changed: false });
    const back = await setDesiredApps(db, org.id, nodeId, { put: [v("db@1.0").id] });
    expect(back.revision).toBe(4);
    const delta = await desiredDeltaSince(db, nodeId, 2);
    expect(delta?.del).toEqual([]);
    expect(delta?.put.map((spec) => spec.app)).toEqual(["cache", "db"]);
    expect(await db.desiredAppRemoval.count({ where: { nodeId } })).toBe(0);
  });

  it("reads deltas by an index range scan on (node_id, desired_revision)", async () => {
    const plan = await database.db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe("SET LOCAL enable_seqscan = off");
      return tx.$queryRawUnsafe<Array<{ "QUERY PLAN": string }>>(
        `EXPLAIN SELECT * FROM app_instance WHERE node_id = '${nodeId}' AND desired_revision > 2`,
      );
    });
    expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toContain(
      "app_instance_node_id_desired_revision_idx",
    );
  });

  it("notifies the node id on the desired-revision channel at commit", async () => {
    const listener = new pg.Client(connectionConfigFromUrl(database.url));
    await listener.connect();
    try {
      const heard: string[] = [];
      listener.on("notification", (message) => heard.push(message.payload ?? ""));
      await listener.query(`LISTEN ${DESIRED_REVISION_CHANNEL}`);
      await setDesiredApps(database.db, org.id, nodeId, { del: [v("cache@1.0").appId] });
      await setDesiredApps(database.db, org.id, nodeId, { del: [v("cache@1.0").appId] }); // no change
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(heard).toEqual([nodeId]);
    } finally {
      await listener.end();
    }
  });

  it("refuses another tenant's node or versions, and bad ids, without changing anything", async () => {
    const db = database.db;
    const before = await db.node.findUniqueOrThrow({ where: { id: nodeId } });
    await expect(setDesiredApps(db, other.id, nodeId, { put: [v("web@1.0").id] })).rejects.toThrow(
      DesiredStateError,
    );
    const otherNode = await db.node.create({ data: { organizationId: other.id, name: "n-other" } });
    await expect(setDesiredApps(db, other.id, otherNode.id, { put: [v("web@1.0").id] })).rejects.toThrow(
      /app versions not found/,
    );
    await expect(setDesiredApps(db, org.id, nodeId, { put: ["nope"] })).rejects.toThrow(/must be a UUID/);
    await expect(
      setDesiredApps(db, org.id, nodeId, { put: [v("web@1.0").id, v("web@2.0").id] }),
    ).rejects.toThrow(/same app/);
    await expect(desiredDeltaSince(db, nodeId, 1.5)).rejects.toThrow(/integer/);
    const after = await db.node.findUniqueOrThrow({ where: { id: nodeId } });
    expect(after.desiredRevision).toBe(before.desiredRevision);
    expect(await db.appInstance.count({ where: { nodeId: otherNode.id } })).toBe(0);
  });
});
