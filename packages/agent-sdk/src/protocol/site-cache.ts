/**
 * The site artifact cache (docs/protocol.md "Site artifact cache"). A site whose leaf node runs
 * JetStream (its own domain, `siteCacheDomain`) holds stream `EF_SITE_CACHE` in the organization's
 * account on that leaf. The gateway seeds it from the hub, one transfer over the site's uplink,
 * publishing each 128 KiB chunk of an artifact on `ef.sc.<siteId>.<obj>.<index>`; the stream
 * stores them as `efc.<obj>.<index>` (a subject transform), so a node needs no site id to read.
 * An agent on the leaf reads a chunk with one JetStream direct get (request/reply, the same
 * shape as its chunk request to the gateway) and falls back to the gateway when the cache does
 * not answer: no JetStream on the leaf, the artifact not (yet) in it, or a node on the hub.
 */

import { MAX_ARTIFACT_CHUNK_BYTES } from "./artifacts.js";

export * from "./site-cache-bounds.js";

export const SITE_CACHE_STREAM = "EF_SITE_CACHE";

/** Chunks are cut at this size (the gateway's chunk size: an agent's offsets fall on chunk starts). */
export const SITE_CACHE_CHUNK_BYTES = MAX_ARTIFACT_CHUNK_BYTES;

/** Header on every cached chunk: the artifact's whole size (the agent's first chunk names it). */
export const SITE_CACHE_SIZE_HEADER = "Ef-Size";

/** What a node publishes to read a cached chunk (a JetStream direct get on its own leaf). */
export const SITE_CACHE_DIRECT_GET_SUBJECT = `$JS.API.DIRECT.GET.${SITE_CACHE_STREAM}`;

/** A site id (a uuid in Postgres) must be one subject token and a valid JetStream domain part. */
const SITE_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

function assertSiteId(siteId: string): void {
  if (!SITE_ID_PATTERN.test(siteId)) throw new Error(`invalid site id ${JSON.stringify(siteId)}`);
}

/** JetStream domain of a site's leaf node (a single subject token, unique per site). */
export function siteCacheDomain(siteId: string): string {
  assertSiteId(siteId);
  return `efsite-${siteId}`;
}

/** Subjects the gateway publishes a site's chunks on (the site's stream captures only these). */
export function siteCacheSeedSubjects(siteId: string): string {
  assertSiteId(siteId);
  return `ef.sc.${siteId}.>`;
}

export function siteCacheSeedSubject(siteId: string, obj: string, index: number): string {
  assertSiteId(siteId);
  return `ef.sc.${siteId}.${obj}.${index}`;
}

/** Where the gateway publishes an artifact's marker (stored as `siteCacheMarkerSubject`). */
export function siteCacheSeedMarkerSubject(siteId: string, obj: string): string {
  assertSiteId(siteId);
  return `ef.sc.${siteId}.idx.${obj}`;
}

/** Stored subjects of all chunks of one object (a purge filter). */
export function siteCacheChunksFilter(obj: string): string {
  return `efc.${obj}.>`;
}

/** Stored subject of chunk `index` of object `obj` (what a node asks for). */
export function siteCacheChunkSubject(obj: string, index: number): string {
  return `efc.${obj}.${index}`;
}

/** Stored marker of a complete artifact: JSON SiteCacheMarker, written after its last chunk. */
export function siteCacheMarkerSubject(obj: string): string {
  return `efc.idx.${obj}`;
}

export interface SiteCacheMarker {
  size: number;
  chunks: number;
  /** When a rollout last needed it (ms): eviction removes the least recently used first. */
  usedAt: number;
}

/**
 * The direct get a node sends for chunk `offset` of `obj` (byte for byte what both agents send:
 * vectors/site-cache/direct-get.json).
 */
export function siteCacheDirectGetRequest(obj: string, offset: number): Uint8Array {
  return new TextEncoder().encode(
    JSON.stringify({ last_by_subj: siteCacheChunkSubject(obj, offset / SITE_CACHE_CHUNK_BYTES) }),
  );
}

/** A direct get's answer as a node judges it: its status, the Ef-Size header, the data's length. */
export interface SiteCacheReplyFacts {
  /** 0 for a stored message; 404 (not cached), 408, 503, ... for a status reply. */
  status: number;
  /** The Ef-Size header as sent (null: absent). */
  size: string | null;
  dataBytes: number;
}

/**
 * The artifact's size when the reply is a whole cached chunk at `offset` (or the last one), else
 * null: a miss, and the node asks the gateway. Anything but what the gateway stored is a miss.
 */
export function siteCacheHit(reply: SiteCacheReplyFacts, offset: number): number | null {
  if (reply.status !== 0 && (reply.status < 200 || reply.status >= 300)) return null;
  const size = reply.size === null || !/^\d+$/.test(reply.size) ? Number.NaN : Number(reply.size);
  if (!Number.isSafeInteger(size) || size <= offset) return null;
  if (reply.dataBytes !== Math.min(SITE_CACHE_CHUNK_BYTES, size - offset)) return null;
  return size;
}
