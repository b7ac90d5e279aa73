import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Db, hashEnrollmentToken, type Role } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiSession, createCaller, createTRPCContext } from "../src";
import { installCommand } from "../src/domain/enrollment";
import type { GatewayConnection } from "../src/gateway-client";
import { membersByRole, ORG } from "./actors";
import { callerFor, sessionOf } from "./callers";
import { type GatewayStandIn, STAND_IN_ENROLL_CREDS, startGatewayStandIn } from "./gateway-stand-in";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let members: Record<Role, ApiSession>;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  members = await membersByRole(db);
});

afterAll(async () => {
  await testDb?.drop();
});

describe("enrollment tokens", () => {
  it("creates a token: secret once (hash stored), labels, expiry, and a one-line install command", async () => {
    const caller = callerFor(db, members.operator, ORG);
    const created = await caller.enrollment.createToken({
      description: "plant 7 line 2",
      expiresInHours: 2,
      maxUses: 3,
      labels: { site: "plant-7", tier: "canary" },
      requiresApproval: true,
    });
    expect(created.token).toMatch(/^efe_/);
    expect(created.installCommand).toContain(created.token);
    expect(created.installCommand).toContain("sudo systemctl enable --now edgefleet-agent");
    expect(created.installCommand).not.toContain("\n");
    expect(created).toMatchObject({
      uses: 0,
      maxUses: 3,
      requiresApproval: true,
      usable: true,
      revokedAt: null,
    });
    expect(created.expiresAt.getTime() - Date.now()).toBeGreaterThan(2 * 3_600_000 - 60_000);
    const row = await db.enrollmentToken.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.tokenHash).toBe(hashEnrollmentToken(created.token));
    expect(row.labels).toEqual({ site: "plant-7", tier: "canary" });

    const listed = await caller.enrollment.listTokens({});
    expect(listed.items[0]).toMatchObject({ id: created.id, description: "plant 7 line 2" });
    expect(JSON.stringify(listed)).not.toContain(created.token);
  });

  it("uses the configured agent server URL in the install command", async () => {
    const { createCaller, createTRPCContext } = await import("../src");
    const caller = createCaller(
      createTRPCContext({
        db,
        session: members.owner,
        activeOrganizationSlug: ORG,
        agentServerUrl: "nats://hub.example:7422",
        agentDownloadUrl: "https://console.example/downloads/agent/",
      }),
    );
    const created = await caller.enrollment.createToken({});
    expect(created.installCommand).toContain('servers: [\\"nats://hub.example:7422\\"]'.replaceAll("\\", ""));
    expect(created.installCommand).toContain(
      "sudo curl -fsSL -o /usr/local/bin/edgefleet-agent 'https://console.example/downloads/agent/edgefleet-agent-linux-'\"$ARCH\"",
    );
  });

  it("downloads the native agent for the node's architecture and its unit, then starts the service", async () => {
    // The console's downloads as a node sees them: a plain HTTP server with the two files.
    const served: string[] = [];
    const server = createServer((req, res) => {
      served.push(req.url ?? "");
      const body =
        req.url === "/dl/edgefleet-agent-linux-amd64"
          ? "#!/bin/sh\necho agent\n"
          : req.url === "/dl/edgefleet-agent.service"
            ? "[Service]\nExecStart=/usr/local/bin/edgefleet-agent run --config /etc/edgefleet/agent.yaml\n"
            : null;
      res.writeHead(body === null ? 404 : 200).end(body ?? "not found");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const dir = mkdtempSync(join(tmpdir(), "ef-install-"));
    try {
      const command = installCommand("efe_x", {
        serverUrl: "nats://h:4222",
        downloadUrl: `http://127.0.0.1:${port}/dl`,
      });
      mkdirSync(join(dir, "bin"));
      mkdirSync(join(dir, "systemd"));
      // As pasted on an x86_64 node, with its paths moved into a scratch dir; `systemctl` is the
      // one thing replaced, by the unit's own ExecStart line.
      const localized = command
        .replaceAll("sudo ", "")
        .replace("$(uname -m", "$(echo x86_64")
        .replaceAll("/usr/local/bin", join(dir, "bin"))
        .replaceAll("/etc/systemd/system", join(dir, "systemd"))
        .replaceAll("/etc/edgefleet", join(dir, "etc"))
        .replace(
          "systemctl daemon-reload && systemctl enable --now edgefleet-agent",
          `sed -n 's/^ExecStart=//p' ${join(dir, "systemd/edgefleet-agent.service")}`,
        );
      const output = await new Promise<string>((resolve, reject) =>
        execFile("bash", ["-c", localized], (error, stdout) => (error ? reject(error) : resolve(stdout))),
      );
      expect(served).toEqual(["/dl/edgefleet-agent-linux-amd64", "/dl/edgefleet-agent.service"]);
      expect(output.trim()).toBe("/usr/local/bin/edgefleet-agent run --config /etc/edgefleet/agent.yaml");
      expect(statSync(join(dir, "bin/edgefleet-agent")).mode & 0o777).toBe(0o755);
      expect(execFileSync(join(dir, "bin/edgefleet-agent"), { encoding: "utf8" })).toBe("agent\n");
      expect(readFileSync(join(dir, "etc/agent.yaml"), "utf8")).toContain("token: efe_x");
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fails the whole command when the download fails, before writing any config", async () => {
    const server = createServer((_req, res) => res.writeHead(404).end("no such agent"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const dir = mkdtempSync(join(tmpdir(), "ef-install-"));
    try {
      const localized = installCommand("efe_x", {
        serverUrl: "nats://h:4222",
        downloadUrl: `http://127.0.0.1:${port}`,
      })
        .replaceAll("sudo ", "")
        .replaceAll("/usr/local/bin", dir)
        .replaceAll("/etc/edgefleet", join(dir, "etc"));
      await expect(
        new Promise((resolve, reject) =>
          execFile("bash", ["-c", localized], (error) => (error ? reject(error) : resolve(null))),
        ),
      ).rejects.toThrow(/404/);
      expect(existsSync(join(dir, "etc/agent.yaml"))).toBe(false);
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ["an expiry of 0 hours", { expiresInHours: 0 }],
    ["a 10-year expiry", { expiresInHours: 24 * 3650 }],
    ["zero max uses", { maxUses: 0 }],
    ["a bad label key", { labels: { "bad key": "x" } }],
  ])("rejects %s with BAD_REQUEST", async (_label, input) => {
    await expect(
      callerFor(db, members.operator, ORG).enrollment.createToken(input as never),
    ).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });

  it("revokes a token (audited); a token of another organization is NOT_FOUND", async () => {
    const created = await callerFor(db, members.operator, ORG).enrollment.createToken({});
    const revoked = await callerFor(db, members.operator, ORG).enrollment.revokeToken({ id: created.id });
    expect(revoked).toMatchObject({ usable: false, revokedAt: expect.any(Date) });
    const bob = await sessionOf(db, "bob@globex.example");
    await expect(
      callerFor(db, bob, "globex").enrollment.revokeToken({ id: created.id }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});

describe("node approval and revocation", () => {
  async function acmeNode(status: "pending" | "online") {
    return db.node.findFirstOrThrow({ where: { organization: { slug: ORG }, status } });
  }

  it("approves a pending node once; approving it again is a CONFLICT", async () => {
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
    const node = await db.node.create({
      data: { organizationId: acme.id, name: "acme-pending-1", status: "pending" },
    });
    const approved = await callerFor(db, members.operator, ORG).enrollment.approveNode({ nodeId: node.id });
    expect(approved.status).toBe("offline");
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "node.approve", targetId: node.id },
    });
    expect(audit.before).toMatchObject({ status: "pending" });
    expect(audit.after).toMatchObject({ status: "offline" });
    await expect(
      callerFor(db, members.operator, ORG).enrollment.approveNode({ nodeId: node.id }),
    ).rejects.toMatchObject({
      code: "CONFLICT",
    });
  });

  it("revokes a node; another organization's node is NOT_FOUND and untouched", async () => {
    const node = await acmeNode("online");
    const revoked = await callerFor(db, members.operator, ORG).enrollment.revokeNode({ nodeId: node.id });
    expect(revoked).toMatchObject({ status: "revoked", revokedAt: expect.any(Date) });
    const globexNode = await db.node.findFirstOrThrow({
      where: { organization: { slug: "globex" }, status: { not: "revoked" } },
    });
    await expect(
      callerFor(db, members.owner, ORG).enrollment.revokeNode({ nodeId: globexNode.id }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect((await db.node.findUniqueOrThrow({ where: { id: globexNode.id } })).status).toBe(
      globexNode.status,
    );
  });
});

describe("enrollment tokens with a site and the gateway's enrollment credentials", () => {
  let standIn: GatewayStandIn;
  beforeAll(async () => {
    standIn = await startGatewayStandIn();
  });
  afterAll(async () => {
    await standIn?.close();
  });
  const withGateway = (gateway: GatewayConnection | null) =>
    createCaller(
      createTRPCContext({
        db,
        session: members.operator,
        activeOrganizationSlug: ORG,
        agentServerUrl: "nats://127.0.0.1:4222",
        gateway,
      }),
    );

  it("places a token at a site: the summary names it and the nodes get the site label", async () => {
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
    const plant = await db.site.findFirstOrThrow({ where: { organizationId: acme.id, name: "plant-9" } });
    const created = await withGateway(standIn.connection).enrollment.createToken({
      siteId: plant.id,
      labels: { tier: "edge", site: "elsewhere" },
    });
    expect(created.site).toEqual({ id: plant.id, name: "plant-9" });
    expect(created.labels).toEqual({ site: "plant-9", tier: "edge" });
    const row = await db.enrollmentToken.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.siteId).toBe(plant.id);
    const listed = await callerFor(db, members.viewer, ORG)
      .enrollment.listTokens({})
      .catch((error: unknown) => error);
    // Listing tokens needs the operator role.
    expect(listed).toMatchObject({ code: "FORBIDDEN" });
    const page = await callerFor(db, members.operator, ORG).enrollment.listTokens({});
    expect(page.items.find((t) => t.id === created.id)?.site).toEqual({ id: plant.id, name: "plant-9" });
  });

  it("refuses another organization's site (NOT_FOUND) and makes no token", async () => {
    const globexSite = await db.site.findFirstOrThrow({ where: { organization: { slug: "globex" } } });
    const before = await db.enrollmentToken.count();
    await expect(
      withGateway(standIn.connection).enrollment.createToken({ siteId: globexSite.id }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await db.enrollmentToken.count()).toBe(before);
  });

  it("makes no token when the gateway does not answer (SERVICE_UNAVAILABLE)", async () => {
    const before = await db.enrollmentToken.count();
    await expect(
      withGateway({ url: "http://127.0.0.1:9", internalToken: "x".repeat(40) }).enrollment.createToken({}),
    ).rejects.toMatchObject({ code: "SERVICE_UNAVAILABLE" });
    expect(await db.enrollmentToken.count()).toBe(before);
  });

  it("writes the enrollment credentials and a config the agent can read, when the command is run", async () => {
    const created = await withGateway(standIn.connection).enrollment.createToken({ maxUses: 1 });
    const dir = mkdtempSync(join(tmpdir(), "ef-install-"));
    try {
      // The command as a person pastes it, with its paths moved into a scratch dir and without
      // sudo; the agent itself is replaced by `cat` of the config it would read.
      const command = created.installCommand
        .replaceAll("sudo ", "")
        .replaceAll("/etc/edgefleet", dir)
        .replace(
          "systemctl daemon-reload && systemctl enable --now edgefleet-agent",
          `cat ${dir}/agent.yaml`,
        );
      const config = execFileSync("bash", ["-c", command], { encoding: "utf8" });
      expect(config).toBe(
        [
          "stateDir: /var/lib/edgefleet-agent",
          'servers: ["nats://127.0.0.1:4222"]',
          "enroll:",
          `  token: ${created.token}`,
          `  credsFile: ${dir}/enroll.creds`,
          "",
        ].join("\n"),
      );
      expect(readFileSync(join(dir, "enroll.creds"), "utf8")).toBe(STAND_IN_ENROLL_CREDS);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps text printf or the shell would interpret literal", () => {
    const dir = mkdtempSync(join(tmpdir(), "ef-install-"));
    try {
      const tricky = "a 'quoted' 100% \\n back\\slash $HOME `id`\nsecond line\n";
      const command = installCommand("efe_x", { serverUrl: "nats://h:4222", downloadUrl: null }, tricky)
        .replaceAll("sudo ", "")
        .replaceAll("/etc/edgefleet", dir)
        .replace("systemctl daemon-reload && systemctl enable --now edgefleet-agent", "true");
      execFileSync("bash", ["-c", command]);
      expect(readFileSync(join(dir, "enroll.creds"), "utf8")).toBe(tricky);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
