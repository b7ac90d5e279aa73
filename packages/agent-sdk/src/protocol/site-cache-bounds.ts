/**
 * A site artifact cache's bounds and place on the leaf machine (docs/protocol.md "Site artifact
 * cache"), without imports: the console's forms read them (`@edgefleet/agent-sdk/site-cache`).
 */

/** Default bound of a site's artifact cache (its leaf's JetStream file store and the stream). */
export const SITE_CACHE_DEFAULT_MAX_BYTES = 4 * 1024 * 1024 * 1024;

/** Smallest bound a leaf bundle accepts: a cache of a few artifacts' worth, no less. */
export const SITE_CACHE_MIN_BYTES = 16 * 1024 * 1024;

/** Largest bound a leaf bundle accepts (1 TiB): anything more is a typo, not a site box. */
export const SITE_CACHE_MAX_BYTES = 1024 * 1024 * 1024 * 1024;

/** Where a leaf bundle from the console keeps the cache on the leaf machine unless told otherwise. */
export const SITE_CACHE_DEFAULT_DIR = "/var/lib/edgefleet/site-cache";
