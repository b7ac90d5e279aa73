/**
 * Stands in for the gateway's internal API in API tests (the real one is tested in
 * apps/gateway and end to end): checks the shared secret, records what the console's API sent,
 * and answers as the gateway does.
 */
import { createHash } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { GatewayConnection } from "../src/gateway-client";

export const STAND_IN_ENROLL_CREDS =
  "-----BEGIN NATS USER JWT-----\nenroll-jwt\n------END NATS USER JWT------\n";
/** Site id the stand-in answers 503 for (as a gateway without NATS_LEAF_URL does). */
export const UNAVAILABLE_SITE_ID = "00000000-0000-7000-8000-0000000000aa";

export interface GatewayStandIn {
  connection: GatewayConnection;
  received: Array<{ method: string; path: string; auth: string | undefined; body: unknown }>;
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  if (req.headers["content-type"] !== "application/json") return body;
  return body.length > 0 ? JSON.parse(body.toString("utf8")) : null;
}

export async function startGatewayStandIn(secret = "s".repeat(40)): Promise<GatewayStandIn> {
  const received: GatewayStandIn["received"] = [];
  const server = createServer(async (req, res) => {
    const body = await bodyOf(req);
    received.push({ method: req.method ?? "", path: req.url ?? "", auth: req.headers.authorization, body });
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(payload));
    };
    if (req.headers.authorization !== `Bearer ${secret}`) return send(401, { error: "wrong internal token" });
    if (req.url === "/internal/enroll-credentials") return send(200, { creds: STAND_IN_ENROLL_CREDS });
    // Artifact upload: answers like the gateway (the real one is tested in apps/gateway and in
    // artifact-upload.test.ts against a real gateway and object store).
    if (req.method === "PUT" && /^\/internal\/orgs\/[^/]+\/artifacts$/.test(req.url ?? "")) {
      const bytes = body as Buffer;
      return send(200, { sha256: createHash("sha256").update(bytes).digest("hex"), size: bytes.length });
    }
    // Probes: every node measures 1 MiB in 100 ms; log sessions: every node is offline (the real
    // paths are tested in node-logs-probes.test.ts against a real gateway).
    if (req.method === "POST" && /^\/internal\/orgs\/[^/]+\/node-probes$/.test(req.url ?? "")) {
      const { nodeId, to } = body as { nodeId: string; to: string };
      return send(200, {
        result: { nodeId, ok: true, ms: 120, result: { prb: { to, by: 1048576, ms: 100 } } },
      });
    }
    if (req.method === "POST" && /^\/internal\/orgs\/[^/]+\/log-sessions$/.test(req.url ?? "")) {
      return send(200, { ok: false, code: "offline", error: "node is offline" });
    }
    // Node commands: every node answers as an offline node does (the real path is tested in
    // node-commands.test.ts against a real gateway, and end to end in apps/gateway).
    if (req.method === "POST" && /^\/internal\/orgs\/[^/]+\/node-commands$/.test(req.url ?? "")) {
      const { nodeIds } = body as { nodeIds: string[] };
      return send(200, {
        results: nodeIds.map((nodeId) => ({
          nodeId,
          ok: false,
          ms: 0,
          code: "offline",
          error: "node is offline",
        })),
      });
    }
    if (req.url?.includes(UNAVAILABLE_SITE_ID)) return send(503, { error: "NATS_LEAF_URL is not set" });
    send(200, {
      config: 'listen: "0.0.0.0:4222"\n',
      creds: "-----BEGIN NATS USER JWT-----\nsecret\n",
      companions: {
        "site-system.creds": "-----BEGIN NATS USER JWT-----\nsystem-link\n",
        "enroll.creds": "-----BEGIN NATS USER JWT-----\npublic\n",
      },
      expiresAt: "2027-02-23T00:00:00.000Z",
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    connection: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, internalToken: secret },
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
