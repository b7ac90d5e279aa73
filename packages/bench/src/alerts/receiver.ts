import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import type { ReceivedWebhook } from "./measure.js";

/**
 * The benchmark's webhook endpoint on loopback: it checks each delivery's Standard Webhooks
 * signature with the channel's secret (what a customer's receiver does) and keeps the verified
 * ones with their arrival time. A bad signature is answered 401 and counted, never kept.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  rejected = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(secret: string): Promise<WebhookReceiver> {
    const verifier = new Webhook(secret);
    let receiver: WebhookReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const receivedAt = Date.now();
        const body = Buffer.concat(chunks).toString("utf8");
        try {
          const payload = verifier.verify(body, headersOf(req.headers)) as Omit<
            ReceivedWebhook,
            "receivedAt"
          >;
          receiver?.received.push({ receivedAt, type: payload.type, alert: payload.alert });
          res.writeHead(204).end();
        } catch {
          if (receiver) receiver.rejected++;
          res.writeHead(401).end("bad signature");
        }
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    receiver = new WebhookReceiver(server, `http://127.0.0.1:${port}/hook`);
    return receiver;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function headersOf(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === "string") flat[name] = value;
    else if (Array.isArray(value)) flat[name] = value.join(", ");
  }
  return flat;
}
