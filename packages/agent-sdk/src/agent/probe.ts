import type { NatsConnection } from "@nats-io/transport-node";
import {
  agentUpSubject,
  type NodeAddress,
  PROBE_CHUNK_BYTES,
  PROBE_WINDOW,
  type ProbeResult,
  type ProbeTarget,
} from "../protocol/index.js";

/** A probe chunk: the probe id, a 0 byte, then filler up to `size` (docs/protocol.md, "Network probes"). */
export function probeChunk(id: string, size = PROBE_CHUNK_BYTES): Uint8Array {
  const chunk = new Uint8Array(Math.max(size, id.length + 1));
  chunk.set(new TextEncoder().encode(id), 0);
  // Filler that does not compress (a link that compresses must not look faster than it is).
  for (let index = id.length + 1; index < chunk.length; index++) chunk[index] = (index * 2654435761) >>> 24;
  chunk[id.length] = 0;
  return chunk;
}

/** The probe id at the start of a chunk; null when there is none. */
export function probeChunkId(chunk: Uint8Array): string | null {
  const end = chunk.indexOf(0);
  if (end <= 0 || end > 32) return null;
  const id = new TextDecoder().decode(chunk.subarray(0, end));
  return /^[A-Za-z0-9_-]{1,32}$/.test(id) ? id : null;
}

/**
 * Measures throughput from this node, within `bytes` and `ms`:
 * - `leaf`: publishes chunks on `ef.up.<site>.<wid>.sink` (nobody subscribes: the server it is connected
 *   to takes and drops them) and waits for a flush: the bytes the server took, and how long.
 * - `hub`: chunks as requests on `ef.up.<site>.<wid>.prb`, PROBE_WINDOW in flight, each answered by the
 *   gateway that asked for the probe: bytes that reached the hub and were acknowledged.
 * Stops at whichever bound comes first; a hub probe whose chunk goes unanswered fails.
 */
export async function runProbe(
  nc: NatsConnection,
  address: NodeAddress,
  input: { id: string; to: ProbeTarget; bytes: number; ms: number },
): Promise<ProbeResult> {
  const chunk = probeChunk(input.id);
  const started = performance.now();
  const deadline = started + input.ms;
  let sent = 0;
  if (input.to === "leaf") {
    const subject = agentUpSubject(address, "sink");
    while (sent < input.bytes && performance.now() < deadline) {
      nc.publish(subject, chunk);
      sent += chunk.byteLength;
      // Let the socket drain every 64 KiB, so the deadline is checked against real progress.
      if (sent % (4 * chunk.byteLength) === 0) await nc.flush();
    }
    await nc.flush();
  } else {
    const subject = agentUpSubject(address, "prb");
    const sendOne = async (): Promise<void> => {
      while (sent < input.bytes && performance.now() < deadline) {
        sent += chunk.byteLength;
        const remaining = Math.max(1, Math.round(deadline - performance.now()) + 2_000);
        await nc.request(subject, chunk, { timeout: remaining });
      }
    };
    await Promise.all(Array.from({ length: PROBE_WINDOW }, sendOne));
  }
  const ms = Math.max(1, Math.round(performance.now() - started));
  return { to: input.to, by: sent, ms, via: nc.getServer().slice(0, 256) };
}
