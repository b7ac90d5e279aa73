import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { isInternalAddress, webhookUrlProblem } from "@edgefleet/alerts";
import nodemailer, { type Transporter } from "nodemailer";
import { Webhook } from "standardwebhooks";

/** What one delivery attempt came to; `permanent`: retrying cannot help (e.g. a 4xx other than 408/429). */
export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  permanent: boolean;
}

export interface WebhookMessage {
  /** Stable across retries (the outbox row id): receivers de-duplicate on it. */
  id: string;
  body: string;
  /** Current secret first; during a rotation also the previous one (both signatures are sent). */
  secrets: string[];
}

const TIMEOUT_MS = 10_000;

/**
 * Signed with Standard Webhooks (HMAC-SHA256 over `id.timestamp.body`, headers webhook-id,
 * webhook-timestamp, webhook-signature; one `v1,…` per secret, space-separated). The URL is
 * checked again here, where its name resolves: a name that resolves to an internal address is
 * refused unless `allowPrivateAddresses` (tests).
 */
export function sendWebhook(
  url: string,
  message: WebhookMessage,
  allowPrivateAddresses: boolean,
  now = new Date(),
): Promise<SendResult> {
  const problem = webhookUrlProblem(url, { allowPrivateAddresses });
  if (problem)
    return Promise.resolve({
      ok: false,
      statusCode: null,
      error: `webhook URL refused: ${problem}`,
      permanent: true,
    });
  const target = new URL(url);
  const signature = message.secrets
    .map((secret) => new Webhook(secret).sign(message.id, now, message.body))
    .join(" ");
  const request = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = request(
      target,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "Edgefleet-Alerts/1",
          "webhook-id": message.id,
          "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
          "webhook-signature": signature,
        },
        lookup: guardedLookup(allowPrivateAddresses),
        timeout: TIMEOUT_MS,
      },
      (res) => {
        res.resume();
        res.on("end", () => {
          const status = res.statusCode ?? 0;
          const ok = status >= 200 && status < 300;
          resolve({
            ok,
            statusCode: status,
            error: ok ? null : `receiver answered ${status}`,
            permanent: !ok && status >= 400 && status < 500 && status !== 408 && status !== 429,
          });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    req.on("error", (error: NodeJS.ErrnoException) =>
      resolve({
        ok: false,
        statusCode: null,
        error: error.message,
        permanent: error.code === "EF_INTERNAL_ADDRESS",
      }),
    );
    req.end(message.body);
  });
}

export function guardedLookup(allowPrivate: boolean) {
  return (
    hostname: string,
    options: object,
    callback: (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void,
  ) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as LookupAddress[];
      const blocked = allowPrivate ? undefined : list.find((entry) => isInternalAddress(entry.address));
      if (blocked) {
        const refusal: NodeJS.ErrnoException = new Error(
          `${hostname} resolves to an internal address (${blocked.address}); webhooks reach public addresses only`,
        );
        refusal.code = "EF_INTERNAL_ADDRESS";
        return callback(refusal, []);
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(new Error(`no address for ${hostname}`), []);
      callback(null, first.address, first.family);
    });
  };
}

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** Message-ID derived from the outbox row: a re-sent mail is recognisably the same one. */
  messageId: string;
}

/** E-mail over SMTP (nodemailer), one transport per relay. */
export class MailSender {
  private readonly transport: Transporter;

  constructor(
    smtpUrl: string,
    private readonly from: string,
  ) {
    this.transport = nodemailer.createTransport(smtpUrl);
  }

  async send(message: MailMessage): Promise<SendResult> {
    try {
      await this.transport.sendMail({
        from: this.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        messageId: message.messageId,
      });
      return { ok: true, statusCode: 250, error: null, permanent: false };
    } catch (error) {
      const smtp = error as { responseCode?: number; message?: string };
      const code = smtp.responseCode ?? null;
      // 5xx replies are permanent by SMTP's own rules (unknown mailbox, refused); 4xx and network errors retry.
      return {
        ok: false,
        statusCode: code,
        error: smtp.message ?? String(error),
        permanent: code !== null && code >= 500,
      };
    }
  }

  close(): void {
    this.transport.close();
  }
}
