import { formatWireId, siteToken } from "@edgefleet/agent-sdk/protocol";
import { type Db, moveNodeToSite, revokeNode } from "@edgefleet/db";
import type { NatsConnection } from "@nats-io/transport-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeDirectory, nodeDirectoryFeeds } from "../../src/edge/node-directory.js";
import type { EdgeService } from "../../src/edge/service.js";
import { createTestDatabase } from "../support/edge-harness.js";

// The directory keeps found nodes for minutes (issue 16: re-reading every node twice a minute was
// most of the idle CPU); these tests hold it to forgetting exactly what the announcements say.
const silent = pino({ level: "silent" });
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Db;
let directory: NodeDirectory;
let feeds: EdgeService[];

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
  directory = new NodeDirectory(db);
  feeds = nodeDirectoryFeeds(directory, database.url, silent);
  for (const feed of feeds) await feed.start(undefined as unknown as NatsConnection);
});
afterAll(async () => {
  for (const feed of feeds ?? []) await feed.stop();
  await database?.drop();
});

async function organizationWithNodes(slug: string, count: number) {
  const organization = await db.organization.create({ data: { slug, name: slug } });
  const site = await db.site.create({ data: { organizationId: organization.id, name: `${slug}-site` } });
  const nodes = [];
  for (let i = 0; i < count; i++)
    nodes.push(
      await db.node.create({
        data: { organizationId: organization.id, name: `${slug}-${i}`, status: "online" },
      }),
    );
  const org = formatWireId(organization.wireId);
  return {
    organization,
    site,
    nodes: nodes.map((node) => ({
      id: node.id,
      resolve: () => directory.resolve(org, formatWireId(node.wireId)),
    })),
  };
}

// Changes written straight to the table (no announcement) show whether the directory re-read a node.
describe("the node directory", () => {
  it("serves a found node from memory until an announcement says otherwise", async () => {
    const { nodes } = await organizationWithNodes("dir-a", 1);
    const node = nodes[0] ?? expect.unreachable();
    expect(await node.resolve()).toMatchObject({ id: node.id, revoked: false, site: siteToken(null) });
    await db.$executeRaw`UPDATE node SET status = 'revoked' WHERE id = ${node.id}::uuid`;
    expect(await node.resolve()).toMatchObject({ revoked: false });
  });

  it("a revocation makes every replica forget the organization's nodes, and only its", async () => {
    const revoked = await organizationWithNodes("dir-b", 2);
    const other = await organizationWithNodes("dir-c", 1);
    const [first, second] = revoked.nodes;
    const bystander = other.nodes[0] ?? expect.unreachable();
    if (!first || !second) expect.unreachable();
    await first.resolve();
    await second.resolve();
    await bystander.resolve();
    // The same silent change to a sibling and to another organization's node: only the sibling is re-read.
    for (const id of [second.id, bystander.id])
      await db.$executeRaw`UPDATE node SET status = 'revoked' WHERE id = ${id}::uuid`;

    expect(await revokeNode(db, revoked.organization.id, first.id)).toBe(true);
    await expect.poll(async () => (await first.resolve())?.revoked, { timeout: 10_000 }).toBe(true);
    expect(await second.resolve()).toMatchObject({ id: second.id, revoked: true });
    expect(await bystander.resolve()).toMatchObject({ id: bystander.id, revoked: false });
  });

  it("a move makes it forget the node, which is then found at its new site", async () => {
    const { organization, site, nodes } = await organizationWithNodes("dir-d", 1);
    const node = nodes[0] ?? expect.unreachable();
    expect(await node.resolve()).toMatchObject({ site: siteToken(null) });
    expect(await moveNodeToSite(db, organization.id, node.id, site.id)).toBe(true);
    await expect
      .poll(async () => (await node.resolve())?.site, { timeout: 10_000 })
      .toBe(siteToken(site.wireId));
    expect(await node.resolve()).toMatchObject({ formerSites: { [siteToken(null)]: expect.any(Number) } });
  });

  it("starts over when its listener had to reconnect (announcements meanwhile are lost)", async () => {
    const { nodes } = await organizationWithNodes("dir-e", 1);
    const node = nodes[0] ?? expect.unreachable();
    await node.resolve();
    await db.$executeRaw`UPDATE node SET status = 'revoked' WHERE id = ${node.id}::uuid`;
    expect(await node.resolve()).toMatchObject({ revoked: false });
    // Postgres drops the listeners' connections (a failover, a restart).
    await db.$executeRaw`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND query LIKE 'LISTEN%'`;
    await expect.poll(async () => (await node.resolve())?.revoked, { timeout: 10_000 }).toBe(true);
  });

  it("a node unknown in the subject's organization is null, also under another organization's token", async () => {
    const mine = await organizationWithNodes("dir-f", 1);
    const theirs = await organizationWithNodes("dir-g", 1);
    const node = await db.node.findUniqueOrThrow({ where: { id: mine.nodes[0]?.id } });
    expect(
      await directory.resolve(formatWireId(theirs.organization.wireId), formatWireId(node.wireId)),
    ).toBeNull();
    expect(await directory.resolve(formatWireId(mine.organization.wireId), "zzzzzz")).toBeNull();
  });
});
