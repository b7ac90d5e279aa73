import { createHash } from "node:crypto";
import type { ChunkAnswer, ChunkSource } from "../../src/artifacts/chunk-source.js";
import { MAX_ARTIFACT_CHUNK_BYTES } from "../../src/protocol/index.js";

export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Answers chunk requests from objects in memory the way the gateway does (same ranges, same typed
 * errors), and records what was asked: the fetcher's unit tests check its window, offsets and
 * retries against it. Integration tests use the real gateway.
 */
export class MemoryChunkSource implements ChunkSource {
  readonly objects = new Map<string, Uint8Array>();
  readonly requests: Array<{ obj: string; off: number; len: number }> = [];
  inFlight = 0;
  maxInFlight = 0;
  /** Decides a request's fate before it is served: throw (transport failure) or answer an error. */
  fault:
    | ((request: { obj: string; off: number; attempt: number }) => ChunkAnswer | Error | undefined)
    | undefined;
  delayMs = 1;
  private readonly attempts = new Map<string, number>();

  add(content: Uint8Array): string {
    const name = sha256(content);
    this.objects.set(name, content);
    return name;
  }

  async chunk(obj: string, off: number, len: number): Promise<ChunkAnswer> {
    this.requests.push({ obj, off, len });
    const key = `${obj}@${off}`;
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      const fault = this.fault?.({ obj, off, attempt });
      if (fault instanceof Error) throw fault;
      if (fault) return fault;
      const content = this.objects.get(obj);
      if (!content) return { ok: false, err: "not_found" };
      if (off > content.byteLength) return { ok: false, err: "bad_range" };
      const end = Math.min(content.byteLength, off + Math.min(len, MAX_ARTIFACT_CHUNK_BYTES));
      return { ok: true, size: content.byteLength, data: content.slice(off, end) };
    } finally {
      this.inFlight--;
    }
  }
}
