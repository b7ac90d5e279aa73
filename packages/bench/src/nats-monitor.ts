/** Byte counters of client connections, read from the NATS server's monitoring endpoint. */

export interface ConnectionBytes {
  cid: number;
  name: string;
  inBytes: number;
  outBytes: number;
  inMsgs: number;
  outMsgs: number;
}

interface ConnzPage {
  total: number;
  offset: number;
  limit: number;
  connections: Array<{
    cid: number;
    name?: string;
    in_bytes: number;
    out_bytes: number;
    in_msgs: number;
    out_msgs: number;
  }>;
}

/** Every open connection whose name starts with `namePrefix` (pages through /connz). */
export async function connectionBytes(monitorUrl: string, namePrefix: string): Promise<ConnectionBytes[]> {
  const found: ConnectionBytes[] = [];
  const limit = 2_000;
  for (let offset = 0; ; offset += limit) {
    const response = await fetch(`${monitorUrl}/connz?limit=${limit}&offset=${offset}&sort=cid`, {
      signal: AbortSignal.timeout(30_000),
    });
    if (!response.ok) throw new Error(`${monitorUrl}/connz answered HTTP ${response.status}`);
    const page = (await response.json()) as ConnzPage;
    for (const connection of page.connections ?? []) {
      if (!connection.name?.startsWith(namePrefix)) continue;
      found.push({
        cid: connection.cid,
        name: connection.name,
        inBytes: connection.in_bytes,
        outBytes: connection.out_bytes,
        inMsgs: connection.in_msgs,
        outMsgs: connection.out_msgs,
      });
    }
    if ((page.connections ?? []).length < limit || offset + limit >= page.total) return found;
  }
}

export interface TrafficDelta {
  /** Connections present (same cid) at both snapshots: the only ones counted. */
  connections: number;
  inBytes: number;
  outBytes: number;
  inMsgs: number;
  outMsgs: number;
}

/** Traffic between two snapshots, over connections that lived through the whole window. */
export function trafficBetween(
  before: readonly ConnectionBytes[],
  after: readonly ConnectionBytes[],
): TrafficDelta {
  const start = new Map(before.map((connection) => [connection.cid, connection]));
  const delta: TrafficDelta = { connections: 0, inBytes: 0, outBytes: 0, inMsgs: 0, outMsgs: 0 };
  for (const end of after) {
    const begin = start.get(end.cid);
    if (!begin) continue;
    delta.connections++;
    delta.inBytes += end.inBytes - begin.inBytes;
    delta.outBytes += end.outBytes - begin.outBytes;
    delta.inMsgs += end.inMsgs - begin.inMsgs;
    delta.outMsgs += end.outMsgs - begin.outMsgs;
  }
  return delta;
}

export async function serverVersion(monitorUrl: string): Promise<string> {
  const response = await fetch(`${monitorUrl}/varz`, { signal: AbortSignal.timeout(10_000) });
  const varz = (await response.json()) as { version?: string };
  return varz.version ?? "unknown";
}

/** The server's own totals (/varz): every byte and message clients sent it and it sent them. */
export async function serverTraffic(
  monitorUrl: string,
): Promise<{ inBytes: number; outBytes: number; inMsgs: number; outMsgs: number }> {
  const response = await fetch(`${monitorUrl}/varz`, { signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`${monitorUrl}/varz answered HTTP ${response.status}`);
  const varz = (await response.json()) as {
    in_bytes: number;
    out_bytes: number;
    in_msgs: number;
    out_msgs: number;
  };
  return { inBytes: varz.in_bytes, outBytes: varz.out_bytes, inMsgs: varz.in_msgs, outMsgs: varz.out_msgs };
}

interface JszAccounts {
  account_details?: Array<{
    stream_detail?: Array<{
      name: string;
      consumer_detail?: Array<{ name: string; num_pending?: number; num_ack_pending?: number }> | null;
    }>;
  }>;
}

/** Messages JetStream holds for consumers (`/jsz`): not yet delivered plus delivered and unacknowledged. */
export function consumerBacklogOf(jsz: JszAccounts, stream?: string): number {
  let backlog = 0;
  for (const account of jsz.account_details ?? [])
    for (const detail of account.stream_detail ?? []) {
      if (stream !== undefined && detail.name !== stream) continue;
      for (const consumer of detail.consumer_detail ?? [])
        backlog += (consumer.num_pending ?? 0) + (consumer.num_ack_pending ?? 0);
    }
  return backlog;
}

export async function consumerBacklog(monitorUrl: string, stream?: string): Promise<number> {
  const response = await fetch(`${monitorUrl}/jsz?accounts=true&consumers=true`, {
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error(`${monitorUrl}/jsz answered HTTP ${response.status}`);
  return consumerBacklogOf((await response.json()) as JszAccounts, stream);
}
