/**
 * Encoded ArtifactChunkReply payloads recently sent, in memory, least recently used out first.
 * A fleet pulling one artifact asks every gateway for the same few chunks thousands of times;
 * answering from here skips the disk cache's open/read/close and the MessagePack encoding of
 * 128 KiB per request. Objects are named by their SHA-256, so a reply never goes stale.
 *
 * Keyed by bucket (one per organization) + object + offset + length: two tenants storing the same
 * bytes never share an entry. Only ever consulted after the node's access check.
 */
export interface ChunkReply {
  /** The encoded ArtifactChunkReply, sent as it is. */
  payload: Uint8Array;
  /** Artifact bytes in it (what the bytes-served counter adds). */
  dataBytes: number;
}

export class ChunkReplies {
  // Map order is insertion order: a hit re-inserts its key, so the first key is the oldest.
  private readonly entries = new Map<string, ChunkReply>();
  private bytes = 0;

  /** `maxBytes`: sum of the kept payloads' sizes (0 disables the cache). */
  constructor(readonly maxBytes: number) {}

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  get(bucket: string, obj: string, off: number, len: number): ChunkReply | undefined {
    const key = chunkKey(bucket, obj, off, len);
    const reply = this.entries.get(key);
    if (reply === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, reply);
    return reply;
  }

  set(bucket: string, obj: string, off: number, len: number, reply: ChunkReply): void {
    if (reply.payload.byteLength > this.maxBytes) return;
    const key = chunkKey(bucket, obj, off, len);
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.bytes -= previous.payload.byteLength;
    }
    this.entries.set(key, reply);
    this.bytes += reply.payload.byteLength;
    for (const [oldest, evicted] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= evicted.payload.byteLength;
    }
  }
}

function chunkKey(bucket: string, obj: string, off: number, len: number): string {
  return `${bucket}/${obj}/${off}/${len}`;
}
