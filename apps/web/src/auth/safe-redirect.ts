/**
 * Only same-site paths may be used as a post-sign-in destination; anything else (absolute URLs,
 * protocol-relative `//evil.example`, backslash tricks) falls back to the fleet page.
 */
export function safeCallbackPath(value: string | null | undefined, fallback = "/fleet"): string {
  if (!value?.startsWith("/") || value.startsWith("//") || value.includes("\\")) return fallback;
  return value;
}
