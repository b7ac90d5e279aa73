import {
  SITE_CACHE_DEFAULT_DIR,
  SITE_CACHE_DEFAULT_MAX_BYTES,
  SITE_CACHE_MAX_BYTES,
  SITE_CACHE_MIN_BYTES,
} from "@edgefleet/agent-sdk/site-cache";
import { timeZoneSchema } from "@edgefleet/rollout";
import { z } from "zod";

export const LEAF_CREDENTIALS_PATH = "/etc/edgefleet/site.creds";
const MiB = 1024 * 1024;

/** A leaf bundle's site cache unless the operator says otherwise (the gateway's defaults too). */
export { SITE_CACHE_DEFAULT_DIR };
export const SITE_CACHE_DEFAULT_MAX_MIB = SITE_CACHE_DEFAULT_MAX_BYTES / MiB;

/**
 * Site names: what operators call the place (`plant-7`), also used as the `site` label value
 * and in the leaf node's server name, so label-value characters only.
 */
export const siteName = z
  .string()
  .trim()
  .regex(
    /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/,
    "site names: 1-63 letters, digits, . _ -, starting and ending with a letter or digit",
  );
const siteDescription = z.string().trim().max(500);

export const siteIdInput = z.object({ id: z.uuid() });

/** IANA zone (rollout maintenance windows are in it); fixed offsets are refused (they drift with DST). */
const siteTimeZone = timeZoneSchema;

export const createSiteInput = z.object({
  name: siteName,
  description: siteDescription.optional(),
  timeZone: siteTimeZone.optional(),
});

export const updateSiteInput = z.object({
  id: z.uuid(),
  name: siteName.optional(),
  /** null clears it. */
  description: siteDescription.nullable().optional(),
  /** null clears it (UTC). */
  timeZone: siteTimeZone.nullable().optional(),
});

export const leafBundleInput = z.object({
  id: z.uuid(),
  /** Where the site's agents connect on the leaf machine. */
  listen: z
    .string()
    .regex(/^[A-Za-z0-9.:[\]-]+:\d{1,5}$/, "listen must be host:port, e.g. 0.0.0.0:4222")
    .default("0.0.0.0:4222"),
  /** Where site.creds will live on the leaf machine; leaf.conf refers to it. */
  credentialsPath: z
    .string()
    .regex(/^\/[^\s"\\]*$/, "credentialsPath must be an absolute path without spaces or quotes")
    .max(500)
    .default(LEAF_CREDENTIALS_PATH),
  /**
   * Run the site artifact cache on the leaf (JetStream in the site's own domain): the rollout
   * controller seeds it, and the site's uplink carries each artifact once. Off: nodes fetch from the hub.
   */
  siteCache: z.boolean().default(true),
  /** Where the leaf keeps the cache on the leaf machine. */
  siteCacheDir: z
    .string()
    .regex(/^\/[^\s"\\]*$/, "siteCacheDir must be an absolute path without spaces or quotes")
    .max(500)
    .default(SITE_CACHE_DEFAULT_DIR),
  /** Its bound in MiB; the least recently used artifacts are evicted first. */
  siteCacheMaxMiB: z
    .int("a whole number of MiB")
    .min(SITE_CACHE_MIN_BYTES / MiB, `at least ${SITE_CACHE_MIN_BYTES / MiB} MiB`)
    .max(SITE_CACHE_MAX_BYTES / MiB, `at most ${SITE_CACHE_MAX_BYTES / MiB} MiB (1 TiB)`)
    .default(SITE_CACHE_DEFAULT_MAX_MIB),
});
