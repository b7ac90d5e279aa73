import { Agent } from "node:https";
import webpush, { WebPushError } from "web-push";
import { guardedLookup } from "../net/guarded-lookup.js";
import type { SendResult } from "./senders.js";

export interface VapidKeys {
  /** mailto: or https: contact the push services may use (RFC 8292). */
  subject: string;
  publicKey: string;
  privateKey: string;
}

export interface PushTarget {
  endpoint: string;
  p256dh: string;
  auth: string;
}

/** 404/410 from a push service: the subscription is gone for good (RFC 8030 §7.3); remove it. */
export interface PushResult extends SendResult {
  expired: boolean;
}

const TIMEOUT_MS = 10_000;
/** How long a push service keeps a message for an offline device: an alert older than this is noise. */
const TTL_S = 3600;

/**
 * Web Push (VAPID, aes128gcm) through the `web-push` library. The endpoint is a URL a browser
 * handed us, so like a webhook it must not reach the control plane's own addresses: the same
 * resolving guard sits in the socket's DNS lookup.
 */
export class WebPushSender {
  private readonly agent: Agent;

  constructor(
    private readonly vapid: VapidKeys,
    allowPrivateAddresses: boolean,
  ) {
    this.agent = new Agent({
      keepAlive: true,
      lookup: guardedLookup(
        allowPrivateAddresses,
        (hostname, address) =>
          `${hostname} resolves to an internal address (${address}); push services are reached at public addresses only`,
      ),
    });
  }

  async send(target: PushTarget, payload: string, urgent: boolean): Promise<PushResult> {
    try {
      const response = await webpush.sendNotification(
        { endpoint: target.endpoint, keys: { p256dh: target.p256dh, auth: target.auth } },
        payload,
        {
          vapidDetails: this.vapid,
          TTL: TTL_S,
          urgency: urgent ? "high" : "normal",
          contentEncoding: "aes128gcm",
          timeout: TIMEOUT_MS,
          agent: this.agent,
        },
      );
      return { ok: true, statusCode: response.statusCode, error: null, permanent: false, expired: false };
    } catch (error) {
      if (error instanceof WebPushError) {
        const status = error.statusCode;
        const expired = status === 404 || status === 410;
        return {
          ok: false,
          statusCode: status,
          error: expired
            ? `push service answered ${status}: the subscription has expired`
            : `push service answered ${status}${error.body ? `: ${String(error.body).slice(0, 200)}` : ""}`,
          // 413 (payload too large) and other 4xx will not change on retry; 429 and 5xx may.
          permanent: expired || (status >= 400 && status < 500 && status !== 408 && status !== 429),
          expired,
        };
      }
      const failure = error as NodeJS.ErrnoException;
      return {
        ok: false,
        statusCode: null,
        error: failure.message ?? String(error),
        permanent: failure.code === "EF_INTERNAL_ADDRESS",
        expired: false,
      };
    }
  }

  close(): void {
    this.agent.destroy();
  }
}
