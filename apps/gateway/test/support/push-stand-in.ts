import { execFileSync } from "node:child_process";
import { createECDH, type ECDH, randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decrypt } from "http_ece";
import { decodeJwt, importJWK, jwtVerify } from "jose";

/** A browser's side of a subscription: the keys it would give PushManager.subscribe's caller. */
export interface Device {
  path: string;
  ecdh: ECDH;
  auth: Buffer;
  p256dh: string;
  authBase64url: string;
}

export function newDevice(path: string): Device {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  const auth = randomBytes(16);
  return {
    path,
    ecdh,
    auth,
    p256dh: ecdh.getPublicKey().toString("base64url"),
    authBase64url: auth.toString("base64url"),
  };
}

export interface Received {
  path: string;
  at: number;
  /** The decrypted payload (JSON text), or null when the device is not one this stand-in knows. */
  payload: string | null;
  /** VAPID (RFC 8292): the `k` public key and whether the `t` JWT verified against it for this origin. */
  vapidKey: string | null;
  vapidVerified: boolean;
  urgency: string | undefined;
}

/**
 * A push service on loopback, HTTPS like the real ones (web-push only speaks https): it checks
 * the VAPID header, decrypts each message with the device's keys (http_ece, aes128gcm), and
 * answers per path: /ok/… 201, /gone/… 410 (an expired subscription), /down/… 500 forever.
 */
export class PushStandIn {
  readonly received: Received[] = [];
  private readonly devices = new Map<string, Device>();

  private constructor(
    private readonly server: Server,
    readonly origin: string,
    readonly caFile: string,
    private readonly dir: string,
  ) {}

  static async start(): Promise<PushStandIn> {
    const dir = mkdtempSync(join(tmpdir(), "push-stand-in-"));
    const key = join(dir, "key.pem");
    const cert = join(dir, "cert.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ],
      { stdio: "ignore" },
    );
    let standIn: PushStandIn | null = null;
    const server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        void standIn?.receive(req.url ?? "/", req.headers, Buffer.concat(chunks)).then((status) => {
          res.writeHead(status).end();
        });
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    standIn = new PushStandIn(server, origin, cert, dir);
    return standIn;
  }

  register(device: Device): string {
    this.devices.set(device.path, device);
    return `${this.origin}${device.path}`;
  }

  private async receive(path: string, headers: Record<string, string | string[] | undefined>, body: Buffer) {
    const device = this.devices.get(path);
    let payload: string | null = null;
    if (device) {
      payload = decrypt(body, {
        version: "aes128gcm",
        privateKey: device.ecdh,
        authSecret: device.auth,
      }).toString("utf8");
    }
    const vapid = /^vapid t=([^,]+),\s*k=(.+)$/.exec(String(headers.authorization ?? ""));
    let vapidVerified = false;
    if (vapid?.[1] && vapid[2]) {
      const raw = Buffer.from(vapid[2], "base64url");
      const jwk = {
        kty: "EC",
        crv: "P-256",
        x: raw.subarray(1, 33).toString("base64url"),
        y: raw.subarray(33, 65).toString("base64url"),
      };
      try {
        await jwtVerify(vapid[1], await importJWK(jwk, "ES256"), { audience: this.origin });
        vapidVerified = decodeJwt(vapid[1]).sub !== undefined;
      } catch {
        vapidVerified = false;
      }
    }
    this.received.push({
      path,
      at: Date.now(),
      payload,
      vapidKey: vapid?.[2] ?? null,
      vapidVerified,
      urgency: headers.urgency as string | undefined,
    });
    if (path.startsWith("/gone/")) return 410;
    if (path.startsWith("/down/")) return 500;
    return 201;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
