/**
 * A site's uplink as the hub sees it: the byte counters of the site leaf's connection on the
 * hub's monitoring endpoint (`/leafz`). Budgets are checked against these, not against what the
 * gateway believes it sent. A leaf is recognised by its server name (`<org slug>-<site name>`,
 * the leaf bundle's `server_name`).
 */
export interface LeafLinkCounters {
  /** Hub to leaf (artifact chunks go this way). */
  downBytes: number;
  /** Leaf to hub. */
  upBytes: number;
}

interface Leafz {
  leafs?: Array<{ name?: string; in_bytes?: number; out_bytes?: number }>;
}

export async function readLeafLinks(monitorUrl: string): Promise<Map<string, LeafLinkCounters>> {
  const response = await fetch(new URL("/leafz", monitorUrl), { signal: AbortSignal.timeout(5_000) });
  if (!response.ok) throw new Error(`${monitorUrl}/leafz answered ${response.status}`);
  const leafz = (await response.json()) as Leafz;
  const links = new Map<string, LeafLinkCounters>();
  for (const leaf of leafz.leafs ?? []) {
    if (!leaf.name) continue;
    const known = links.get(leaf.name);
    // Several connections of one leaf (a reconnect overlapping): their sum is the link.
    links.set(leaf.name, {
      downBytes: (known?.downBytes ?? 0) + (leaf.out_bytes ?? 0),
      upBytes: (known?.upBytes ?? 0) + (leaf.in_bytes ?? 0),
    });
  }
  return links;
}

export interface UplinkUse {
  /** Bytes down the link while watched. */
  bytes: number;
  /** Highest rate over any one sampling interval (bytes per second). */
  peakBytesPerSecond: number;
  samples: number;
}

/**
 * Samples one leaf's counters every `intervalMs` until stopped; the peak is the highest
 * per-interval rate. Null use when the hub has no such leaf connection (the site's nodes are on
 * the hub itself, or its leaf is down).
 */
export function watchLeafLink(
  monitorUrl: string,
  leafName: string,
  intervalMs = 1_000,
): { stop: () => Promise<UplinkUse | null> } {
  let first: { at: number; bytes: number } | null = null;
  let last: { at: number; bytes: number } | null = null;
  let peak = 0;
  let samples = 0;
  let busy = false;
  const sample = async () => {
    if (busy) return;
    busy = true;
    try {
      await sampleOnce();
    } finally {
      busy = false;
    }
  };
  const sampleOnce = async () => {
    const link = (await readLeafLinks(monitorUrl).catch(() => null))?.get(leafName);
    if (!link) return;
    const now = { at: performance.now(), bytes: link.downBytes };
    if (last && now.at > last.at)
      peak = Math.max(peak, ((now.bytes - last.bytes) * 1000) / (now.at - last.at));
    first ??= now;
    last = now;
    samples++;
  };
  const started = sample();
  const timer = setInterval(() => void sample(), intervalMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await started;
      while (busy) await new Promise((resolve) => setTimeout(resolve, 10));
      await sample();
      if (!first || !last) return null;
      return { bytes: last.bytes - first.bytes, peakBytesPerSecond: Math.round(peak), samples };
    },
  };
}
