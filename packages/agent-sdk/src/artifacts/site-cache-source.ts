import type { NatsConnection } from "@nats-io/transport-node";
import {
  SITE_CACHE_CHUNK_BYTES,
  SITE_CACHE_DIRECT_GET_SUBJECT,
  SITE_CACHE_SIZE_HEADER,
  siteCacheDirectGetRequest,
  siteCacheHit,
} from "../protocol/index.js";
import type { ChunkAnswer, ChunkSource } from "./chunk-source.js";

export interface SiteCacheSourceOptions {
  /** The agent's connection now (null while disconnected: the fallback handles that). */
  connection: () => NatsConnection | null;
  /** Where chunks come from when the site cache does not have them: the gateway. */
  fallback: ChunkSource;
  /** Per direct get (default 5 s: the leaf is next door; a slower one is skipped for that chunk). */
  timeoutMs?: number;
  /** After a miss, the object is fetched from the fallback for this long (default 30 s). */
  missTtlMs?: number;
  /** Bytes on the wire per request and reply (the agent's control byte counters). */
  onSent?: (bytes: number) => void;
  onReceived?: (bytes: number) => void;
  /** Chunks answered by the site cache and by the fallback (tests, diagnostics). */
  counters?: { siteCache: number; fallback: number };
}

/**
 * Artifact chunks from the site's leaf first (docs/protocol.md "Site artifact cache"): one
 * JetStream direct get on EF_SITE_CACHE per chunk, answered by the leaf the node is connected to,
 * so a site's nodes do not each pull the artifact over the uplink. Anything but a whole chunk
 * (no JetStream there, not cached, a node on the hub, a timeout, an odd offset) goes to the
 * gateway instead, and that object skips the cache for a while so a miss costs one request,
 * not one per chunk. The bytes are verified against the version's SHA-256 by the fetcher either way.
 */
export function siteCacheFirst(options: SiteCacheSourceOptions): ChunkSource {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const missTtlMs = options.missTtlMs ?? 30_000;
  const missedUntil = new Map<string, number>();
  const fromFallback = (obj: string, off: number, len: number) => {
    if (options.counters) options.counters.fallback++;
    return options.fallback.chunk(obj, off, len);
  };
  return {
    chunk: async (obj, off, len): Promise<ChunkAnswer> => {
      const nc = options.connection();
      const missed = missedUntil.get(obj);
      if (!nc || off % SITE_CACHE_CHUNK_BYTES !== 0 || len < SITE_CACHE_CHUNK_BYTES)
        return fromFallback(obj, off, len);
      if (missed !== undefined) {
        if (missed > Date.now()) return fromFallback(obj, off, len);
        missedUntil.delete(obj);
      }
      const cached = await directGet(nc, obj, off, timeoutMs, options).catch((error: unknown) =>
        // A slow answer (a busy leaf) costs this chunk only; anything else is a miss of the object.
        isTimeout(error) ? undefined : null,
      );
      if (cached === undefined) return fromFallback(obj, off, len);
      if (!cached) {
        missedUntil.set(obj, Date.now() + missTtlMs);
        if (missedUntil.size > 1_000) missedUntil.delete(missedUntil.keys().next().value as string);
        return fromFallback(obj, off, len);
      }
      if (options.counters) options.counters.siteCache++;
      return cached;
    },
  };
}

async function directGet(
  nc: NatsConnection,
  obj: string,
  off: number,
  timeoutMs: number,
  options: SiteCacheSourceOptions,
): Promise<ChunkAnswer | null> {
  const payload = siteCacheDirectGetRequest(obj, off);
  options.onSent?.(SITE_CACHE_DIRECT_GET_SUBJECT.length + payload.byteLength);
  const reply = await nc.request(SITE_CACHE_DIRECT_GET_SUBJECT, payload, { timeout: timeoutMs });
  options.onReceived?.(reply.subject.length + reply.data.byteLength);
  // 404 (not cached), 408, 503: a status reply with no message. A stored message has no status.
  const size = siteCacheHit(
    {
      status: reply.headers?.code ?? 0,
      size: reply.headers?.has(SITE_CACHE_SIZE_HEADER) ? reply.headers.get(SITE_CACHE_SIZE_HEADER) : null,
      dataBytes: reply.data.byteLength,
    },
    off,
  );
  return size === null ? null : { ok: true, size, data: reply.data };
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && /timeout/i.test(`${error.name} ${error.message}`);
}
