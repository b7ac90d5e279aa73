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
  /** The answering server's id (changes when it restarts). */
  server_id?: string;
  /** When the server read its counters (its own clock: the only honest time base for a rate). */
  now?: string;
  leafs?: Array<{ id?: number; name?: string; in_bytes?: number; out_bytes?: number }>;
}

export interface LeafzReading {
  /** The hub's time of the reading (null: it did not say). */
  at: number | null;
  /** Per leaf name, the sum of its connections. */
  links: Map<string, LeafLinkCounters>;
  /** Per leaf name, the down byte counter of each of its connections, by connection id. */
  connections: Map<string, Record<string, number>>;
}

/** One hub server's monitoring URL, or every node's of a hub cluster (a leaf links to any of them). */
export type HubMonitor = string | readonly string[];

export async function readLeafLinks(monitor: HubMonitor): Promise<Map<string, LeafLinkCounters>> {
  return (await readLeafz(monitor)).links;
}

/**
 * Every hub node's /leafz at once. A node that does not answer fails the reading: a link missing
 * from it would later count its whole counter again as if it were new.
 */
export async function readLeafz(monitor: HubMonitor): Promise<LeafzReading> {
  const urls = typeof monitor === "string" ? [monitor] : monitor;
  const answers = await Promise.all(
    urls.map(async (monitorUrl) => {
      const response = await fetch(new URL("/leafz", monitorUrl), { signal: AbortSignal.timeout(5_000) });
      if (!response.ok) throw new Error(`${monitorUrl}/leafz answered ${response.status}`);
      return (await response.json()) as Leafz;
    }),
  );
  const links = new Map<string, LeafLinkCounters>();
  const connections = new Map<string, Record<string, number>>();
  let at: number | null = null;
  for (const [node, leafz] of answers.entries()) {
    // Connection ids are per server: on a cluster they carry the server's id (a restarted node
    // has a new one, so its connections count as new, not as counters that went back).
    const server = urls.length > 1 ? `${leafz.server_id ?? `node${node}`}/` : "";
    for (const [index, leaf] of (leafz.leafs ?? []).entries()) {
      if (!leaf.name) continue;
      const known = links.get(leaf.name);
      // A leaf has several connections (its organization, system and enrollment links; a
      // reconnect overlapping; links to several nodes of a cluster): their sum is the link.
      links.set(leaf.name, {
        downBytes: (known?.downBytes ?? 0) + (leaf.out_bytes ?? 0),
        upBytes: (known?.upBytes ?? 0) + (leaf.in_bytes ?? 0),
      });
      const ofLeaf = connections.get(leaf.name) ?? {};
      ofLeaf[`${server}${leaf.id ?? `#${index}`}`] = leaf.out_bytes ?? 0;
      connections.set(leaf.name, ofLeaf);
    }
    const now = leafz.now ? Date.parse(leafz.now) : Number.NaN;
    if (Number.isFinite(now)) at = Math.max(at ?? now, now);
  }
  return { at, links, connections };
}

/** The name a site's leaf has on the hub: the leaf bundle's `server_name`. */
export function siteLeafName(organizationSlug: string, siteName: string): string {
  return `${organizationSlug}-${siteName}`;
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
  monitor: HubMonitor,
  leafName: string,
  intervalMs = 1_000,
): { stop: () => Promise<UplinkUse | null> } {
  let first: { at: number; bytes: number } | null = null;
  let last: { at: number; bytes: number } | null = null;
  let peak = 0;
  let finalBytes = 0;
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
    const sentAt = Date.now();
    const read = await readLeafz(monitor).catch(() => null);
    const link = read?.links.get(leafName);
    if (!read || !link) return;
    // The server's time of the reading: a slow answer must not shrink or stretch the interval.
    const now = { at: read.at ?? sentAt, bytes: link.downBytes };
    first ??= now;
    // A rate over an interval much shorter than the sampling one (the reading at stop) is noise:
    // such a reading only moves the byte total; the next full interval starts from the last one.
    if (!last) last = now;
    else if (now.at - last.at >= intervalMs / 2) {
      peak = Math.max(peak, ((now.bytes - last.bytes) * 1000) / (now.at - last.at));
      last = now;
    }
    finalBytes = now.bytes;
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
      return { bytes: finalBytes - first.bytes, peakBytesPerSecond: Math.round(peak), samples };
    },
  };
}
