import { createHash, randomUUID } from "node:crypto";
import { type OrganizationBucket, SHA256_HEX } from "./bucket.js";

/**
 * Streams one artifact into an organization's bucket while hashing it, and files it under its
 * SHA-256. The name is only known at the end, so the bytes go in under a temporary name first and
 * are renamed (a new meta entry pointing at the same chunks) once hashed. What a failure leaves:
 * - the body is cut or errors, or passes the size cap: the object store purges the chunks it
 *   wrote and no meta entry exists: nothing;
 * - the content does not match the declared hash, or is already stored: the temporary object's
 *   chunks and meta entry are purged: nothing (the existing object is reused).
 */

export interface StoredArtifact {
  sha256: string;
  size: number;
  /** True when the bucket already held these bytes (nothing new was kept). */
  deduplicated: boolean;
}

export class ArtifactTooLargeError extends Error {
  override name = "ArtifactTooLargeError";
  constructor(readonly maxBytes: number) {
    super(`the artifact is larger than the limit of ${maxBytes} bytes`);
  }
}

export class ArtifactHashMismatchError extends Error {
  override name = "ArtifactHashMismatchError";
  constructor(
    readonly declared: string,
    readonly actual: string,
  ) {
    super(`sha256: declared ${declared}, but the content hashes to ${actual}`);
  }
}

/** A body that ended before its declared length (a cut upload). */
export class ArtifactTruncatedError extends Error {
  override name = "ArtifactTruncatedError";
}

export interface StoreOptions {
  maxBytes: number;
  /** Lowercase hex SHA-256 the content must have. */
  expectedSha256?: string | undefined;
  /** Declared length (Content-Length): fewer bytes is a cut upload, more is refused. */
  expectedSize?: number | undefined;
}

/** Hashes and counts what passes; errors the stream past the cap or past the declared length. */
export function meteredStream(source: AsyncIterable<Uint8Array>, options: StoreOptions) {
  const hash = createHash("sha256");
  let size = 0;
  const iterator = source[Symbol.asyncIterator]();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await iterator.next();
      if (done) {
        if (options.expectedSize !== undefined && size !== options.expectedSize) {
          controller.error(
            new ArtifactTruncatedError(`the body ended after ${size} of ${options.expectedSize} bytes`),
          );
          return;
        }
        controller.close();
        return;
      }
      size += value.byteLength;
      if (size > options.maxBytes) {
        controller.error(new ArtifactTooLargeError(options.maxBytes));
        await iterator.return?.();
        return;
      }
      hash.update(value);
      controller.enqueue(value);
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  return { stream, digest: () => ({ sha256: hash.digest("hex"), size }) };
}

/** Puts `source` into `bucket` under its SHA-256 (see the file comment for failure cases). */
export async function storeArtifact(
  bucket: OrganizationBucket,
  source: AsyncIterable<Uint8Array>,
  options: StoreOptions,
): Promise<StoredArtifact> {
  if (options.expectedSize !== undefined && options.expectedSize > options.maxBytes) {
    throw new ArtifactTooLargeError(options.maxBytes);
  }
  if (options.expectedSha256 !== undefined && !SHA256_HEX.test(options.expectedSha256)) {
    throw new Error("expectedSha256 must be lowercase hex SHA-256");
  }
  const metered = meteredStream(source, options);
  const temporary = `upload-${randomUUID()}`;
  // put() purges its chunks itself when the stream errors: a cut upload leaves nothing.
  await bucket.store.put({ name: temporary }, metered.stream);
  const { sha256, size } = metered.digest();
  try {
    if (options.expectedSha256 !== undefined && options.expectedSha256 !== sha256) {
      throw new ArtifactHashMismatchError(options.expectedSha256, sha256);
    }
    const existing = await bucket.store.info(sha256);
    if (existing && !existing.deleted) {
      await removeCompletely(bucket, temporary);
      return { sha256, size, deduplicated: true };
    }
    await bucket.store.update(temporary, { name: sha256 });
    return { sha256, size, deduplicated: false };
  } catch (error) {
    await removeCompletely(bucket, temporary).catch(() => undefined);
    throw error;
  }
}

/** Deletes an object and also purges its deletion marker, so no trace of it stays in the bucket. */
async function removeCompletely(bucket: OrganizationBucket, name: string): Promise<void> {
  const info = await bucket.store.info(name);
  if (info && !info.deleted) await bucket.store.delete(name);
  await bucket.purgeMeta(name);
}

/** The artifact's size if the bucket holds it, else null. */
export async function artifactInfo(
  bucket: OrganizationBucket,
  sha256: string,
): Promise<{ size: number } | null> {
  const info = await bucket.store.info(sha256);
  return info && !info.deleted ? { size: info.size } : null;
}
