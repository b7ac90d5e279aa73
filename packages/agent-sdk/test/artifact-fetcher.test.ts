import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ArtifactError } from "../src/artifacts/chunk-source.js";
import { type FetchArtifactOptions, fetchArtifact } from "../src/artifacts/fetcher.js";
import { MemoryChunkSource, sha256 } from "./support/memory-chunk-source.js";

const CHUNK = 1024;
let dir: string;
let source: MemoryChunkSource;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-sdk-fetch-"));
  source = new MemoryChunkSource();
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function fetch(obj: string, overrides: Partial<FetchArtifactOptions> = {}) {
  return fetchArtifact({
    source,
    obj,
    sha256: obj,
    partPath: join(dir, `${obj}.part`),
    chunkBytes: CHUNK,
    retry: { baseMs: 5, maxMs: 20 },
    ...overrides,
  });
}

async function failure(promise: Promise<unknown>): Promise<ArtifactError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ArtifactError);
  return error as ArtifactError;
}

describe("artifact fetcher", () => {
  it("fetches every chunk with at most `window` requests in flight, in order on disk, and verifies it", async () => {
    const content = randomBytes(CHUNK * 20 + 123);
    const obj = source.add(content);
    const progress: number[] = [];
    const fetched = await fetch(obj, { window: 3, onProgress: (done) => progress.push(done) });

    expect(fetched.size).toBe(content.byteLength);
    expect(await readFile(fetched.path)).toEqual(content);
    expect(source.maxInFlight).toBeGreaterThan(1);
    expect(source.maxInFlight).toBeLessThanOrEqual(3);
    expect(source.requests).toHaveLength(21);
    expect(progress.at(-1)).toBe(content.byteLength);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  });

  it("resumes from the prefix already on disk (after a reconnect or an agent restart)", async () => {
    const content = randomBytes(CHUNK * 8);
    const obj = source.add(content);
    const prefix = CHUNK * 5 + 100; // a crash may leave half a chunk: it is still a prefix
    await writeFile(join(dir, `${obj}.part`), content.subarray(0, prefix));

    const fetched = await fetch(obj);
    expect(await readFile(fetched.path)).toEqual(content);
    expect(Math.min(...source.requests.map((request) => request.off))).toBe(prefix);
    const bytesAsked = source.requests.reduce((sum, request) => sum + request.len, 0);
    expect(bytesAsked).toBeLessThan(CHUNK * 4);
  });

  it("starts over when the file on disk is longer than the object", async () => {
    const content = randomBytes(CHUNK * 2);
    const obj = source.add(content);
    await writeFile(join(dir, `${obj}.part`), randomBytes(CHUNK * 3));
    const fetched = await fetch(obj);
    expect(await readFile(fetched.path)).toEqual(content);
  });

  it("retries a chunk after transport failures and `unavailable`, with backoff", async () => {
    const content = randomBytes(CHUNK * 6);
    const obj = source.add(content);
    source.fault = ({ off, attempt }) => {
      if (off === CHUNK * 3 && attempt <= 2) return new Error("TIMEOUT");
      if (off === CHUNK * 4 && attempt === 1) return { ok: false, err: "unavailable", why: "store down" };
      return undefined;
    };
    const fetched = await fetch(obj);
    expect(await readFile(fetched.path)).toEqual(content);
    expect(source.requests.filter((request) => request.off === CHUNK * 3)).toHaveLength(3);
    expect(source.requests.filter((request) => request.off === CHUNK * 4)).toHaveLength(2);
  });

  it("gives up as `unavailable` after maxAttempts, keeping the prefix for a resume", async () => {
    const content = randomBytes(CHUNK * 4);
    const obj = source.add(content);
    source.fault = ({ off }) => (off >= CHUNK * 2 ? new Error("no responders") : undefined);
    const error = await failure(fetch(obj, { maxAttempts: 3, window: 1 }));
    expect(error.code).toBe("unavailable");
    expect(error.retryable).toBe(true);
    expect(error.message).toContain("no responders");
    expect((await stat(join(dir, `${obj}.part`))).size).toBe(CHUNK * 2);

    source.fault = undefined;
    const fetched = await fetch(obj);
    expect(await readFile(fetched.path)).toEqual(content);
  });

  it("refuses a download whose SHA-256 is not the stated one, and deletes it", async () => {
    const obj = source.add(randomBytes(CHUNK * 3));
    const stated = sha256(Buffer.from("something else"));
    const error = await failure(fetch(obj, { sha256: stated }));
    expect(error.code).toBe("sha256_mismatch");
    expect(error.retryable).toBe(false);
    expect(error.message).toBe(`artifact SHA-256 mismatch: expected ${stated}, got ${obj}`);
    expect(existsSync(join(dir, `${obj}.part`))).toBe(false);
  });

  it("refuses an artifact over the size cap after one request, before downloading it", async () => {
    const obj = source.add(randomBytes(CHUNK * 10));
    const error = await failure(fetch(obj, { maxBytes: CHUNK * 4 }));
    expect(error.code).toBe("too_large");
    expect(error.message).toContain(`${CHUNK * 10} bytes, over the ${CHUNK * 4}-byte limit`);
    expect(source.requests).toHaveLength(1);
  });

  it("stops at once on a typed refusal (not allowed, not found): no retries", async () => {
    const obj = source.add(randomBytes(CHUNK));
    source.fault = () => ({ ok: false, err: "not_allowed", why: "not desired on this node" });
    const refused = await failure(fetch(obj));
    expect(refused.code).toBe("not_allowed");
    expect(refused.message).toContain("not desired on this node");
    expect(source.requests).toHaveLength(1);

    source.fault = undefined;
    const missing = await failure(fetch(sha256(Buffer.from("never uploaded"))));
    expect(missing.code).toBe("not_found");
  });

  it("stops when cancelled", async () => {
    const obj = source.add(randomBytes(CHUNK * 50));
    source.delayMs = 20;
    const controller = new AbortController();
    const pending = fetch(obj, { signal: controller.signal, window: 1 });
    setTimeout(() => controller.abort(), 60);
    expect((await failure(pending)).code).toBe("aborted");
    expect(source.requests.length).toBeLessThan(50);
  });

  it("rejects a malformed answer (wrong length) and asks again", async () => {
    const content = randomBytes(CHUNK * 2);
    const obj = source.add(content);
    source.fault = ({ off, attempt }) =>
      off === CHUNK && attempt === 1
        ? { ok: true, size: content.byteLength, data: new Uint8Array(10) }
        : undefined;
    const fetched = await fetch(obj);
    expect(await readFile(fetched.path)).toEqual(content);
  });
});
