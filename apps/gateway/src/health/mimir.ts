import type { Probe } from "./probe-loop.js";

/**
 * Mimir's /ready answers 200 only once its ring members (ingester, distributor...) are
 * ACTIVE; before that it answers 503 with the reason, which we pass on as the failure text.
 */
export function createMimirProbe(mimirUrl: string): Probe {
  // Relative resolution keeps a path prefix (e.g. behind a proxy at /mimir/) intact.
  const readyUrl = new URL("ready", mimirUrl.endsWith("/") ? mimirUrl : `${mimirUrl}/`);
  return async (signal) => {
    const response = await fetch(readyUrl, { signal });
    const body = (await response.text()).trim();
    if (response.status !== 200) {
      throw new Error(`GET ${readyUrl.pathname} answered ${response.status}: ${body.slice(0, 200)}`);
    }
    return undefined;
  };
}
