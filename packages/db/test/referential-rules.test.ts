import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemoData } from "../src/seed";
import { createMigratedDatabase, type TestDatabase } from "./support/test-database";

let database: TestDatabase;
beforeAll(async () => {
  database = await createMigratedDatabase();
  await seedDemoData(database.db);
});
afterAll(async () => {
  await database?.drop();
});

describe("referential rules", () => {
  it("refuses to delete a site that still has nodes", async () => {
    const site = await database.db.site.findFirstOrThrow({ where: { name: "plant-7" } });
    await expect(database.db.site.delete({ where: { id: site.id } })).rejects.toMatchObject({
      code: "P2003",
    });
  });

  it("refuses to delete an app version that instances want or run", async () => {
    const version = await database.db.appVersion.findFirstOrThrow({ where: { version: "1.5.0" } });
    expect(await database.db.appInstance.count({ where: { desiredVersionId: version.id } })).toBeGreaterThan(
      0,
    );
    await expect(database.db.appVersion.delete({ where: { id: version.id } })).rejects.toMatchObject({
      code: "P2003",
    });
  });

  it("deleting an app removes its versions, instances and rollouts", async () => {
    const app = await database.db.app.findFirstOrThrow({ where: { name: "modbus-bridge" } });
    await database.db.app.delete({ where: { id: app.id } });
    expect(await database.db.appVersion.count({ where: { appId: app.id } })).toBe(0);
    expect(await database.db.appInstance.count({ where: { appId: app.id } })).toBe(0);
  });

  it("deleting an organization removes all of its rows and nothing of the other one", async () => {
    const globexNodesBefore = await database.db.node.count({ where: { name: { startsWith: "globex-" } } });
    const acme = await database.db.organization.findUniqueOrThrow({ where: { slug: "acme" } });
    await database.db.organization.delete({ where: { id: acme.id } });
    for (const count of [
      database.db.node.count({ where: { organizationId: acme.id } }),
      database.db.site.count({ where: { organizationId: acme.id } }),
      database.db.appInstance.count({ where: { organizationId: acme.id } }),
      database.db.rollout.count({ where: { organizationId: acme.id } }),
      database.db.membership.count({ where: { organizationId: acme.id } }),
    ]) {
      expect(await count).toBe(0);
    }
    expect(await database.db.node.count({ where: { name: { startsWith: "globex-" } } })).toBe(
      globexNodesBefore,
    );
  });
});
