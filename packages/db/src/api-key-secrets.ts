/**
 * How an API key's secret is made and stored: `efk_` + 32 random bytes, shown once; only its
 * SHA-256 is stored (a database leak does not hand out access), plus a short prefix so people can
 * tell keys apart. Here, below the API, so that whatever creates keys (the API, a benchmark's
 * set-up) makes them the one way the API authenticates.
 */
import { createHash, randomBytes } from "node:crypto";

export const API_KEY_PREFIX = "efk_";
/** How much of the key lists show: the prefix and 8 random characters. */
const SHOWN_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** A new key: the secret to show once, and what is stored of it. */
export function mintApiKey(): { key: string; prefix: string; hash: string } {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
  return { key, prefix: key.slice(0, SHOWN_PREFIX_LENGTH), hash: hashApiKey(key) };
}
