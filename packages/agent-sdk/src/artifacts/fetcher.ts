import { createHash, type Hash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, unlink } from "node:fs/promises";
import { type BackoffPolicy, fullJitterDelay } from "../agent/backoff.js";
import { MAX_ARTIFACT_BYTES, MAX_ARTIFACT_CHUNK_BYTES } from "../protocol/index.js";
import { ArtifactError, type ChunkSource } from "./chunk-source.js";

export interface FetchArtifactOptions {
  source: ChunkSource;
  /** Object to fetch (its name is the SHA-256 of its content). */
  obj: string;
  /** SHA-256 the downloaded bytes must have (the version's stated hash). */
  sha256: string;
  /**
   * The download file. It always holds a verified-in-order prefix of the object, so a fetch that
   * finds one (after a reconnect, an agent restart) resumes from its end.
   */
  partPath: string;
  /** Larger objects are refused before any byte is fetched (default MAX_ARTIFACT_BYTES). */
  maxBytes?: number;
  /** Bytes per request (default and maximum MAX_ARTIFACT_CHUNK_BYTES). */
  chunkBytes?: number;
  /** Requests in flight at once (default 4: ~512 KiB in flight, enough to fill a slow long link). */
  window?: number;
  /** Backoff between attempts of one chunk (default 0.5 s doubling to 30 s, full jitter). */
  retry?: BackoffPolicy;
  /** Attempts per chunk before the fetch fails `unavailable` (default: unlimited, the link may come back). */
  maxAttempts?: number;
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
  random?: () => number;
}

export interface FetchedArtifact {
  /** `partPath`, now complete and verified. */
  path: string;
  size: number;
}

const DEFAULT_WINDOW = 4;
const DEFAULT_RETRY: BackoffPolicy = { baseMs: 500, maxMs: 30_000 };

/**
 * Downloads one artifact in chunks with a small window of requests in flight, retrying each
 * chunk with backoff, appending in order (so the file is always a prefix and the hash is computed
 * on the way), and verifying the SHA-256 at the end. Throws ArtifactError.
 */
export async function fetchArtifact(options: FetchArtifactOptions): Promise<FetchedArtifact> {
  const chunkBytes = Math.min(options.chunkBytes ?? MAX_ARTIFACT_CHUNK_BYTES, MAX_ARTIFACT_CHUNK_BYTES);
  const maxBytes = Math.min(options.maxBytes ?? MAX_ARTIFACT_BYTES, MAX_ARTIFACT_BYTES);
  const window = Math.max(1, options.window ?? DEFAULT_WINDOW);
  const request = chunkRequester(options);

  let { hash, written } = await hashExisting(options.partPath);
  const file = await open(options.partPath, "a");
  try {
    // The first answer names the size; a prefix longer than the object is not one of it: start over.
    let first = await request(written, chunkBytes).catch((error: unknown) => {
      if (written > 0 && error instanceof ArtifactError && error.code === "bad_range") return null;
      throw error;
    });
    if (first === null || written > first.size) {
      await file.truncate(0);
      hash = createHash("sha256");
      written = 0;
      first = await request(0, chunkBytes);
    }
    const size = first.size;
    if (size > maxBytes) {
      throw new ArtifactError("too_large", `artifact is ${size} bytes, over the ${maxBytes}-byte limit`);
    }
    const append = async (data: Uint8Array) => {
      await file.write(data);
      hash.update(data);
      written += data.byteLength;
      options.onProgress?.(written, size);
    };
    await append(first.data);

    let next = written;
    let failure: unknown;
    const ready = new Map<number, Uint8Array>();
    const inFlight = new Set<Promise<void>>();
    while (written < size && failure === undefined) {
      while (inFlight.size < window && next < size) {
        const offset = next;
        next += Math.min(chunkBytes, size - offset);
        const pending: Promise<void> = request(offset, chunkBytes, size)
          .then(
            (answer) => void ready.set(offset, answer.data),
            (error: unknown) => {
              failure ??= error;
            },
          )
          .finally(() => inFlight.delete(pending));
        inFlight.add(pending);
      }
      await Promise.race(inFlight);
      for (let data = ready.get(written); data !== undefined; data = ready.get(written)) {
        ready.delete(written);
        await append(data);
      }
    }
    if (failure !== undefined) {
      // Requests still in flight settle on their own (their results are dropped).
      throw failure;
    }
    await file.sync();
    const digest = hash.digest("hex");
    if (digest !== options.sha256) {
      await file.close();
      await unlink(options.partPath).catch(() => undefined);
      throw new ArtifactError(
        "sha256_mismatch",
        `artifact SHA-256 mismatch: expected ${options.sha256}, got ${digest}`,
      );
    }
    return { path: options.partPath, size };
  } finally {
    await file.close().catch(() => undefined);
  }
}

/** SHA-256 state and length of what is already on disk (nothing: a fresh start). */
async function hashExisting(path: string): Promise<{ hash: Hash; written: number }> {
  const hash = createHash("sha256");
  let written = 0;
  try {
    for await (const chunk of createReadStream(path)) {
      hash.update(chunk as Buffer);
      written += (chunk as Buffer).byteLength;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  return { hash, written };
}

/**
 * One chunk, retried with backoff on transport failures, `unavailable` and malformed answers;
 * a typed refusal (not found, not allowed, too large) ends the fetch at once.
 */
function chunkRequester(options: FetchArtifactOptions) {
  const policy = options.retry ?? DEFAULT_RETRY;
  const maxAttempts = options.maxAttempts ?? Number.POSITIVE_INFINITY;
  const random = options.random ?? Math.random;
  return async (
    offset: number,
    chunkBytes: number,
    knownSize?: number,
  ): Promise<{ size: number; data: Uint8Array }> => {
    let lastProblem = "";
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      if (attempt > 0) await abortableSleep(fullJitterDelay(attempt - 1, policy, random), options.signal);
      throwIfAborted(options.signal);
      let answer: Awaited<ReturnType<ChunkSource["chunk"]>>;
      try {
        answer = await raceAbort(options.source.chunk(options.obj, offset, chunkBytes), options.signal);
      } catch (error) {
        if (error instanceof ArtifactError) throw error;
        lastProblem = error instanceof Error ? error.message : String(error);
        continue;
      }
      if (!answer.ok) {
        if (answer.err === "unavailable") {
          lastProblem = `artifact store unavailable${answer.why ? `: ${answer.why}` : ""}`;
          continue;
        }
        throw new ArtifactError(
          answer.err,
          `artifact ${answer.err.replace("_", " ")}${answer.why ? `: ${answer.why}` : ""}`,
        );
      }
      const size = knownSize ?? answer.size;
      const expected = Math.max(0, Math.min(chunkBytes, size - offset));
      if (answer.size !== size || answer.data.byteLength !== expected) {
        lastProblem = `bad chunk at ${offset}: ${answer.data.byteLength} of ${answer.size} bytes, expected ${expected} of ${size}`;
        continue;
      }
      return { size, data: answer.data };
    }
    throw new ArtifactError(
      "unavailable",
      `chunk at ${offset} not fetched after ${maxAttempts} attempts: ${lastProblem}`,
    );
  };
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new ArtifactError("aborted", "fetch cancelled");
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new ArtifactError("aborted", "fetch cancelled"));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
