/**
 * Only same-site paths may be used as a post-sign-in destination; anything else (absolute URLs,
 * protocol-relative `//evil.example`, backslash tricks) falls back to the fleet page.
 */
export function safeCallbackPath(value: string | null | undefined, fallback = "/fleet"): string {
  if (!value?.startsWith("/") || value.startsWith("//") || value.includes("\\")) return fallback;
  return value;
}

/**
 * Auth.js redirect policy. Next.js rewrites a request's 127.0.0.1 host to "localhost", so inside
 * Auth.js route handlers `baseUrl` may be http://localhost:PORT although the browser (and the
 * session cookies) live on AUTH_URL's origin. Same-site destinations are therefore re-rooted on
 * the public origin; any other destination becomes the public start page.
 */
export function publicRedirect(url: string, baseUrl: string, publicOrigin: string): string {
  const origin = new URL(publicOrigin).origin;
  let target: URL;
  try {
    target = new URL(url, baseUrl);
  } catch {
    return `${origin}/`;
  }
  if (target.origin !== new URL(baseUrl).origin && target.origin !== origin) return `${origin}/`;
  return `${origin}${target.pathname}${target.search}${target.hash}`;
}
