import { Agent, request as httpRequest, type IncomingHttpHeaders } from "node:http";

/**
 * HTTP with timings, on node:http rather than fetch: it gives time-to-first-byte (the response
 * head) apart from the whole body, and it may talk to the load profile's console port, 6000,
 * which fetch refuses (X11 is on the fetch standard's list of "bad ports").
 */

// A browser reuses its connections; a fresh one per request would measure TCP set-up too.
const keepAliveAgent = new Agent({ keepAlive: true, maxSockets: 64 });

export interface TimedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** From sending the request to the response head (status line and headers). */
  ttfbMs: number;
  /** From sending the request to the last byte of the body. */
  totalMs: number;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}

export function timedRequest(url: string, options: RequestOptions = {}): Promise<TimedResponse> {
  const target = new URL(url);
  const body = options.body === undefined ? undefined : Buffer.from(options.body, "utf8");
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? "GET",
        headers: { ...options.headers, ...(body ? { "content-length": String(body.length) } : {}) },
        agent: keepAliveAgent,
        timeout: options.timeoutMs ?? 60_000,
      },
      (res) => {
        const ttfbMs = performance.now() - started;
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8"),
            ttfbMs,
            totalMs: performance.now() - started,
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${options.method ?? "GET"} ${url}: timed out`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** Cookies of one origin, as a browser would keep them (path and expiry ignored: one short session). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  /** Takes the `Set-Cookie` headers of a response; an empty or expired value deletes the cookie. */
  take(headers: IncomingHttpHeaders): void {
    for (const line of headers["set-cookie"] ?? []) {
      const [pair = "", ...attributes] = line.split(";");
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((attribute) => {
        const [key = "", raw = ""] = attribute.split("=");
        const k = key.trim().toLowerCase();
        return (k === "max-age" && Number(raw) <= 0) || (k === "expires" && Date.parse(raw) < Date.now());
      });
      if (value === "" || expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  set(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  has(name: string): boolean {
    return this.cookies.has(name);
  }

  names(): string[] {
    return [...this.cookies.keys()];
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }
}
