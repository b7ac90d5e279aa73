import { createHash, randomBytes } from "node:crypto";
import { mkdir, open, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { type ArtifactChunkError, MAX_ARTIFACT_BYTES } from "@edgefleet/agent-sdk/protocol";
import type { Objm } from "@nats-io/obj";

export type CachedArtifact =
  | { ok: true; size: number; read: (offset: number, length: number) => Promise<Uint8Array> }
  | { ok: false; err: Extract<ArtifactChunkError, "not_found" | "too_large" | "unavailable">; why: string };

export interface ArtifactCacheOptions {
  dir: string;
  /** Total bytes kept on disk; least recently used artifacts go first. */
  maxBytes: number;
  /** Larger objects are refused `too_large` (default MAX_ARTIFACT_BYTES, the protocol's limit). */
  maxArtifactBytes?: number;
}

interface Entry {
  path: string;
  size: number;
  lastUsed: number;
}

/**
 * Artifacts copied out of the organizations' object store buckets onto the gateway's disk, so
 * that serving a chunk is a positional file read and a fleet pulling one artifact reads the
 * bucket once per gateway, not once per node and chunk (the object store has no range reads).
 * A file gets its final name `<bucket>/<sha256>` only after its content was hashed to that
 * name, so whatever is found under a final name is valid; recomputable, so losing it costs a
 * refill only. Replicas on one host may share the directory (writes are temp file + rename).
 */
export class ArtifactCache {
  private readonly entries = new Map<string, Entry>();
  private readonly filling = new Map<string, Promise<CachedArtifact>>();
  private totalBytes = 0;

  constructor(
    private readonly options: ArtifactCacheOptions,
    private readonly objm: () => Objm,
    private readonly onFill: (result: "ok" | "not_found" | "too_large" | "unavailable") => void = () =>
      undefined,
  ) {}

  async open(bucket: string, obj: string): Promise<CachedArtifact> {
    const key = `${bucket}/${obj}`;
    const path = join(this.options.dir, bucket, obj);
    const known = this.entries.get(key);
    if (known) {
      known.lastUsed = Date.now();
      return this.serve(key, known);
    }
    // Filled earlier (by this process before a restart, or by a replica sharing the directory).
    const size = await stat(path).then(
      (found) => found.size,
      () => undefined,
    );
    if (size !== undefined) return this.serve(key, this.remember(key, path, size));
    let fill = this.filling.get(key);
    if (!fill) {
      fill = this.fill(bucket, obj, key, path).finally(() => this.filling.delete(key));
      this.filling.set(key, fill);
    }
    return fill;
  }

  private serve(key: string, entry: Entry): CachedArtifact {
    return {
      ok: true,
      size: entry.size,
      read: async (offset, length) => {
        let file: Awaited<ReturnType<typeof open>>;
        try {
          file = await open(entry.path, "r");
        } catch (error) {
          // Evicted by a replica sharing the directory: forget it, the next request refills.
          if (this.entries.get(key) === entry) {
            this.entries.delete(key);
            this.totalBytes -= entry.size;
          }
          throw error;
        }
        try {
          const buffer = Buffer.alloc(Math.max(0, Math.min(length, entry.size - offset)));
          const { bytesRead } = await file.read(buffer, 0, buffer.byteLength, offset);
          return new Uint8Array(buffer.buffer, buffer.byteOffset, bytesRead);
        } finally {
          await file.close();
        }
      },
    };
  }

  private async fill(bucket: string, obj: string, key: string, path: string): Promise<CachedArtifact> {
    const result = await this.copyFromStore(bucket, obj, path);
    this.onFill(result.ok ? "ok" : result.err);
    if (!result.ok) return result;
    return this.serve(key, this.remember(key, path, result.size));
  }

  private async copyFromStore(
    bucket: string,
    obj: string,
    path: string,
  ): Promise<{ ok: true; size: number } | Extract<CachedArtifact, { ok: false }>> {
    let store: Awaited<ReturnType<Objm["open"]>>;
    try {
      store = await this.objm().open(bucket);
    } catch (error) {
      const text = errorText(error);
      // No bucket: the organization never uploaded anything.
      return /not found/i.test(text)
        ? { ok: false, err: "not_found", why: "no artifacts stored for this organization" }
        : { ok: false, err: "unavailable", why: text };
    }
    try {
      const info = await store.info(obj);
      if (!info || info.deleted) return { ok: false, err: "not_found", why: "no such artifact" };
      const limit = this.options.maxArtifactBytes ?? MAX_ARTIFACT_BYTES;
      if (info.size > limit) {
        return { ok: false, err: "too_large", why: `${info.size} bytes, over the ${limit}-byte limit` };
      }
      const result = await store.get(obj);
      if (!result) return { ok: false, err: "not_found", why: "no such artifact" };
      await mkdir(join(this.options.dir, bucket), { recursive: true });
      const temporary = `${path}.tmp-${randomBytes(4).toString("hex")}`;
      const hash = createHash("sha256");
      let size = 0;
      try {
        const file = await open(temporary, "w");
        try {
          for await (const chunk of result.data) {
            hash.update(chunk);
            size += chunk.byteLength;
            if (size > limit) throw new Error("object grew past the size limit");
            await file.write(chunk);
          }
        } finally {
          await file.close();
        }
        const streamError = await result.error;
        if (streamError) throw streamError;
        if (hash.digest("hex") !== obj) {
          await rm(temporary, { force: true });
          return { ok: false, err: "not_found", why: "the stored object does not match its name" };
        }
        await rename(temporary, path);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
      return { ok: true, size };
    } catch (error) {
      return { ok: false, err: "unavailable", why: errorText(error) };
    }
  }

  private remember(key: string, path: string, size: number): Entry {
    const entry: Entry = { path, size, lastUsed: Date.now() };
    this.entries.set(key, entry);
    this.totalBytes += size;
    this.evict(key);
    return entry;
  }

  /** Least recently used first; never the artifact just added (a too-small cap still serves it). */
  private evict(keep: string): void {
    if (this.totalBytes <= this.options.maxBytes) return;
    const byAge = [...this.entries.entries()].sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    for (const [key, entry] of byAge) {
      if (this.totalBytes <= this.options.maxBytes) break;
      if (key === keep) continue;
      this.entries.delete(key);
      this.totalBytes -= entry.size;
      // A reader that already opened the file keeps reading it (unlink only drops the name).
      void rm(entry.path, { force: true });
    }
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
