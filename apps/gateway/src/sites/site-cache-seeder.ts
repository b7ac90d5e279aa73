import {
  SITE_CACHE_CHUNK_BYTES,
  SITE_CACHE_SIZE_HEADER,
  SITE_CACHE_STREAM,
  type SiteCacheMarker,
  siteCacheChunksFilter,
  siteCacheDomain,
  siteCacheMarkerSubject,
  siteCacheSeedMarkerSubject,
  siteCacheSeedSubject,
  siteCacheSeedSubjects,
} from "@edgefleet/agent-sdk/protocol";
import {
  SITE_CACHE_DEFAULT_MAX_BYTES,
  siteCacheSeederInbox,
  siteCacheSeederUserJwt,
  type TenancySecrets,
} from "@edgefleet/nats-tenancy";
import {
  DiscardPolicy,
  type JetStreamManager,
  jetstream,
  jetstreamManager,
  type PubAck,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";
import { createUser } from "@nats-io/nkeys";
import { connect, headers, jwtAuthenticator, type NatsConnection, nuid } from "@nats-io/transport-node";
import type { ArtifactCache } from "../edge/artifacts/artifact-cache.js";

/**
 * What seeding one site's cache with one artifact came to. `seeded`/`present`: the site's nodes
 * read it from their leaf. Anything else is the stated fallback: they fetch from the hub.
 */
export type SiteCacheOutcome =
  | { status: "seeded"; bytes: number; ms: number; evicted: string[] }
  | { status: "present"; bytes: number }
  | { status: "no_cache"; reason: string }
  | { status: "full"; reason: string }
  | { status: "failed"; reason: string };

export interface SeedRequest {
  siteId: string;
  accountPublicKey: string;
  /** The organization's object store bucket and the artifact's object name (its SHA-256). */
  bucket: string;
  obj: string;
  /** The site's uplink budget for this transfer (bytes per second); absent: as fast as it goes. */
  bytesPerSecond?: number;
  /** Stamp of "last used" for eviction (default now). */
  now?: number;
}

export interface SiteCacheSeederOptions {
  /** The hub, where the seeder connects as a short-lived user of the organization's account. */
  natsUrl: string | string[];
  /** Bound of a site's cache stream (default SITE_CACHE_DEFAULT_MAX_BYTES, the bundle's default). */
  maxBytes?: number;
  /** Chunk publishes awaiting their ack at once. */
  window?: number;
  /** JetStream API timeout towards the leaf. */
  timeoutMs?: number;
}

/** Smallest stream bound tried when a leaf's file store is smaller than the default. */
const MIN_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * Fills a site's artifact cache (EF_SITE_CACHE on its leaf, domain `efsite-<site>`) from the
 * gateway's copy of the artifact: one transfer over the site's uplink, paced to its budget.
 * Eviction: the stream is bounded (max_bytes, discard new); before a new artifact goes in, the
 * least recently used ones (by `usedAt` of their marker: the last rollout that needed them) are
 * purged until it fits. An artifact larger than the whole cache is `full`: the site falls back.
 */
export class SiteCacheSeeder {
  constructor(
    private readonly secrets: TenancySecrets,
    private readonly artifacts: ArtifactCache,
    private readonly options: SiteCacheSeederOptions,
  ) {}

  async seed(request: SeedRequest): Promise<SiteCacheOutcome> {
    let nc: NatsConnection;
    try {
      nc = await this.connect(request);
    } catch (error) {
      return {
        status: "failed",
        reason: `cannot connect to the hub as the site's seeder: ${errorText(error)}`,
      };
    }
    try {
      return await this.seedOver(nc, request);
    } finally {
      await nc.close().catch(() => undefined);
    }
  }

  private async connect(request: SeedRequest): Promise<NatsConnection> {
    const key = createUser();
    const jwt = await siteCacheSeederUserJwt(this.secrets, {
      siteId: request.siteId,
      publicKey: key.getPublicKey(),
      accountPublicKey: request.accountPublicKey,
      expiresAt: new Date(Date.now() + 60 * 60_000),
    });
    return connect({
      servers: this.options.natsUrl,
      authenticator: jwtAuthenticator(jwt, key.getSeed()),
      inboxPrefix: `${siteCacheSeederInbox(request.siteId)}.${nuid.next()}`,
      name: `edgefleet-site-cache-seeder ${request.siteId}`,
      maxReconnectAttempts: 3,
    });
  }

  private async seedOver(nc: NatsConnection, request: SeedRequest): Promise<SiteCacheOutcome> {
    const domain = siteCacheDomain(request.siteId);
    const timeout = this.options.timeoutMs ?? 5_000;
    let jsm: JetStreamManager;
    try {
      jsm = await jetstreamManager(nc, { domain, timeout });
    } catch (error) {
      return {
        status: "no_cache",
        reason: `the site's leaf runs no JetStream (or is not connected): ${errorText(error)}`,
      };
    }
    const maxBytes = await this.ensureStream(jsm, request.siteId).catch((error: unknown) => error);
    if (typeof maxBytes !== "number") {
      return { status: "no_cache", reason: `the site's cache stream cannot be made: ${errorText(maxBytes)}` };
    }
    const now = request.now ?? Date.now();
    const js = jetstream(nc, { domain, timeout });
    const markerOf = async (obj: string) => {
      const stored = await jsm.direct.getMessage(SITE_CACHE_STREAM, {
        last_by_subj: siteCacheMarkerSubject(obj),
      });
      return stored ? (stored.json<SiteCacheMarker>() as SiteCacheMarker) : null;
    };
    const touch = (obj: string, marker: SiteCacheMarker) =>
      js.publish(siteCacheSeedMarkerSubject(request.siteId, obj), JSON.stringify(marker), {
        expect: { streamName: SITE_CACHE_STREAM },
      });

    const existing = await markerOf(request.obj).catch(() => null);
    if (existing) {
      await touch(request.obj, { ...existing, usedAt: now });
      return { status: "present", bytes: existing.size };
    }

    const artifact = await this.artifacts.open(request.bucket, request.obj);
    if (!artifact.ok)
      return { status: "failed", reason: `the gateway cannot read the artifact: ${artifact.why}` };
    const size = artifact.size;
    const chunks = Math.max(1, Math.ceil(size / SITE_CACHE_CHUNK_BYTES));
    // Per stored message: subject, headers and JetStream's own framing (measured well under 200 B).
    const needed = size + (chunks + 1) * 200;
    if (needed > maxBytes) {
      return {
        status: "full",
        reason: `the artifact (${size} bytes) is larger than the site cache (${maxBytes} bytes)`,
      };
    }
    const evicted = await this.evict(jsm, markerOf, maxBytes, needed, request.obj);

    const started = Date.now();
    const window = this.options.window ?? 8;
    const inFlight = new Set<Promise<PubAck>>();
    let cursor = 0;
    try {
      for (let index = 0; index < chunks; index++) {
        const offset = index * SITE_CACHE_CHUNK_BYTES;
        const data = await artifact.read(offset, SITE_CACHE_CHUNK_BYTES);
        if (request.bytesPerSecond) {
          // Pace the uplink: each chunk takes its slot after the previous one, never earlier than
          // now (no catch-up burst after a stall), so any interval carries at most the budget ×
          // its length plus one chunk.
          const now = performance.now();
          cursor = Math.max(cursor, now) + (data.byteLength / request.bytesPerSecond) * 1000;
          if (cursor > now) await sleep(cursor - now);
        }
        while (inFlight.size >= window) await Promise.race(inFlight);
        const h = headers();
        h.set(SITE_CACHE_SIZE_HEADER, String(size));
        const ack: Promise<PubAck> = js
          .publish(siteCacheSeedSubject(request.siteId, request.obj, index), data, {
            headers: h,
            expect: { streamName: SITE_CACHE_STREAM },
          })
          .finally(() => inFlight.delete(ack));
        // Observed through the race/all below; a rejection here must not go unhandled meanwhile.
        ack.catch(() => undefined);
        inFlight.add(ack);
      }
      await Promise.all(inFlight);
      const marker: SiteCacheMarker = { size, chunks, usedAt: now };
      await touch(request.obj, marker);
    } catch (error) {
      // Leave no half artifact behind: its marker is missing, so nodes would miss on the tail anyway.
      await jsm.streams
        .purge(SITE_CACHE_STREAM, { filter: siteCacheChunksFilter(request.obj) })
        .catch(() => undefined);
      const text = errorText(error);
      return /maximum bytes|insufficient|resources/i.test(text)
        ? { status: "full", reason: `the site cache is full: ${text}` }
        : { status: "failed", reason: `seeding stopped: ${text}` };
    }
    return { status: "seeded", bytes: size, ms: Date.now() - started, evicted };
  }

  /** Creates EF_SITE_CACHE on the leaf if missing; returns its bound. */
  private async ensureStream(jsm: JetStreamManager, siteId: string): Promise<number> {
    const found = await jsm.streams.info(SITE_CACHE_STREAM).catch((error: unknown) => {
      if (/not found/i.test(errorText(error))) return null;
      throw error;
    });
    if (found) return found.config.max_bytes;
    const seedSubjects = siteCacheSeedSubjects(siteId);
    // The leaf's file store may be smaller than the default bound (the bundle's --cache-bytes).
    for (
      let maxBytes = this.options.maxBytes ?? SITE_CACHE_DEFAULT_MAX_BYTES;
      ;
      maxBytes = Math.floor(maxBytes / 2)
    ) {
      try {
        await jsm.streams.add({
          name: SITE_CACHE_STREAM,
          subjects: [seedSubjects],
          subject_transform: { src: seedSubjects, dest: "efc.>" },
          retention: RetentionPolicy.Limits,
          storage: StorageType.File,
          discard: DiscardPolicy.New,
          max_bytes: maxBytes,
          max_msgs_per_subject: 1,
          allow_direct: true,
          num_replicas: 1,
        });
        return maxBytes;
      } catch (error) {
        if (maxBytes / 2 < MIN_CACHE_BYTES || !/insufficient|resources/i.test(errorText(error))) throw error;
      }
    }
  }

  /** Purges least recently used artifacts until `needed` more bytes fit; returns their names. */
  private async evict(
    jsm: JetStreamManager,
    markerOf: (obj: string) => Promise<SiteCacheMarker | null>,
    maxBytes: number,
    needed: number,
    keep: string,
  ): Promise<string[]> {
    const info = await jsm.streams.info(SITE_CACHE_STREAM, { subjects_filter: siteCacheMarkerSubject("*") });
    let used = info.state.bytes;
    if (used + needed <= maxBytes) return [];
    const cached = await Promise.all(
      Object.keys(info.state.subjects ?? {}).map(async (subject) => {
        const obj = subject.slice(siteCacheMarkerSubject("").length);
        return { obj, marker: await markerOf(obj).catch(() => null) };
      }),
    );
    cached.sort((a, b) => (a.marker?.usedAt ?? 0) - (b.marker?.usedAt ?? 0));
    const evicted: string[] = [];
    for (const { obj } of cached) {
      if (used + needed <= maxBytes) break;
      if (obj === keep) continue;
      await jsm.streams.purge(SITE_CACHE_STREAM, { filter: siteCacheChunksFilter(obj) });
      await jsm.streams.purge(SITE_CACHE_STREAM, { filter: siteCacheMarkerSubject(obj) });
      evicted.push(obj);
      used = (await jsm.streams.info(SITE_CACHE_STREAM)).state.bytes;
    }
    return evicted;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
