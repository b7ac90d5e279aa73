import type { ArtifactChunkError } from "../protocol/index.js";

/** One answered chunk request: bytes of the object (with its total size), or a typed refusal. */
export type ChunkAnswer =
  | { ok: true; size: number; data: Uint8Array }
  | { ok: false; err: ArtifactChunkError; why?: string };

/**
 * Where an agent gets artifact chunks: the gateway, over the agent's own `ef.up.<site>.<wid>.art`
 * request/reply (Agent), or anything else that answers the same way. Rejects when the request
 * could not be answered (not connected, timeout): the fetcher retries those.
 */
export interface ChunkSource {
  chunk(obj: string, offset: number, length: number): Promise<ChunkAnswer>;
}

/** Why a fetch or an install failed. `retryable`: asking again later may succeed. */
export type ArtifactFailure =
  | ArtifactChunkError
  | "sha256_mismatch"
  | "bad_reply"
  | "install_failed"
  | "no_source"
  | "aborted";

export class ArtifactError extends Error {
  override name = "ArtifactError";

  constructor(
    readonly code: ArtifactFailure,
    message: string,
  ) {
    super(message);
  }

  /** Deterministic failures (a wrong hash, an oversized or broken artifact) are not fetched again. */
  get retryable(): boolean {
    return !["sha256_mismatch", "too_large", "install_failed", "aborted"].includes(this.code);
  }
}
