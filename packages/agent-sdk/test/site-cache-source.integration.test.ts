import { join } from "node:path";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, headers, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChunkAnswer, ChunkSource } from "../src/artifacts/chunk-source.js";
import { siteCacheFirst } from "../src/artifacts/site-cache-source.js";
import {
  SITE_CACHE_CHUNK_BYTES,
  SITE_CACHE_SIZE_HEADER,
  SITE_CACHE_STREAM,
  siteCacheChunkSubject,
} from "../src/protocol/index.js";
import { type RunningNats, startNats } from "../src/testing.js";

// The agent's side of the site cache against a real nats-server: whole chunks come from the
// stream by direct get; a miss (404), no JetStream at all (no responders) or an odd offset go to
// the fallback (the gateway), and a missed object skips the cache afterwards.

const CACHED = "a".repeat(64);
const MISSING = "b".repeat(64);
const SIZE = SITE_CACHE_CHUNK_BYTES + 10;

let withJetStream: RunningNats;
let withoutJetStream: RunningNats;
const connections: NatsConnection[] = [];

function recordingFallback(): ChunkSource & { calls: Array<[string, number]> } {
  const calls: Array<[string, number]> = [];
  return {
    calls,
    chunk: async (obj, off, len): Promise<ChunkAnswer> => {
      calls.push([obj, off]);
      return { ok: true, size: SIZE, data: new Uint8Array(Math.min(len, SIZE - off)).fill(7) };
    },
  };
}

beforeAll(async () => {
  withJetStream = await startNats(
    ({ dir, port, monitorPort }) =>
      `listen: 127.0.0.1:${port}\nhttp: 127.0.0.1:${monitorPort}\njetstream { store_dir: ${JSON.stringify(join(dir, "js"))} }\n`,
  );
  withoutJetStream = await startNats(
    ({ port, monitorPort }) => `listen: 127.0.0.1:${port}\nhttp: 127.0.0.1:${monitorPort}\n`,
  );
  const nc = await connect({ servers: withJetStream.url });
  connections.push(nc);
  await (await jetstreamManager(nc)).streams.add({
    name: SITE_CACHE_STREAM,
    subjects: ["efc.>"],
    allow_direct: true,
    max_msgs_per_subject: 1,
  });
  const js = jetstream(nc);
  const h = headers();
  h.set(SITE_CACHE_SIZE_HEADER, String(SIZE));
  await js.publish(siteCacheChunkSubject(CACHED, 0), new Uint8Array(SITE_CACHE_CHUNK_BYTES).fill(1), {
    headers: h,
  });
  await js.publish(siteCacheChunkSubject(CACHED, 1), new Uint8Array(10).fill(2), { headers: h });
});

afterAll(async () => {
  await Promise.allSettled(connections.map((nc) => nc.close()));
  await withJetStream?.stop();
  await withoutJetStream?.stop();
});

describe("siteCacheFirst", () => {
  it("reads whole chunks from the site cache and sends misses to the fallback", async () => {
    const nc = await connect({ servers: withJetStream.url });
    connections.push(nc);
    const fallback = recordingFallback();
    const counters = { siteCache: 0, fallback: 0 };
    const source = siteCacheFirst({ connection: () => nc, fallback, counters });

    const first = await source.chunk(CACHED, 0, SITE_CACHE_CHUNK_BYTES);
    expect(first).toMatchObject({ ok: true, size: SIZE });
    expect(first.ok && first.data.byteLength).toBe(SITE_CACHE_CHUNK_BYTES);
    expect(first.ok && first.data[0]).toBe(1);
    const last = await source.chunk(CACHED, SITE_CACHE_CHUNK_BYTES, SITE_CACHE_CHUNK_BYTES);
    expect(last.ok && [...last.data]).toEqual(new Array(10).fill(2));
    expect(fallback.calls).toEqual([]);

    // Not cached: one 404, then the object goes to the fallback without asking the cache again.
    await source.chunk(MISSING, 0, SITE_CACHE_CHUNK_BYTES);
    await source.chunk(MISSING, SITE_CACHE_CHUNK_BYTES, SITE_CACHE_CHUNK_BYTES);
    // An offset off the chunk grid (a resumed partial file) is the gateway's to answer.
    await source.chunk(CACHED, 5, SITE_CACHE_CHUNK_BYTES);
    expect(fallback.calls).toEqual([
      [MISSING, 0],
      [MISSING, SITE_CACHE_CHUNK_BYTES],
      [CACHED, 5],
    ]);
    expect(counters).toEqual({ siteCache: 2, fallback: 3 });
  });

  it("falls back when nothing answers (no JetStream: a leaf without the cache, a node on the hub)", async () => {
    const nc = await connect({ servers: withoutJetStream.url });
    connections.push(nc);
    const fallback = recordingFallback();
    const source = siteCacheFirst({ connection: () => nc, fallback });
    const answer = await source.chunk(CACHED, 0, SITE_CACHE_CHUNK_BYTES);
    expect(answer).toMatchObject({ ok: true, size: SIZE });
    expect(fallback.calls).toEqual([[CACHED, 0]]);
  });
});
