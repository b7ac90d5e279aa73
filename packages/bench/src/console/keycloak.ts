import { CookieJar, type TimedResponse, timedRequest } from "./http.js";

/**
 * Keycloak for the benchmark: let the console client redirect to the load profile's console
 * origin (the realm file lists only the dev and test origins), and sign a person in through the
 * real OIDC flow (sign-in route → Keycloak login form → callback) to get a session cookie.
 */

async function adminToken(keycloakUrl: string, username: string, password: string): Promise<string> {
  const response = await timedRequest(`${keycloakUrl}/realms/master/protocol/openid-connect/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "password",
      client_id: "admin-cli",
      username,
      password,
    }).toString(),
  });
  if (response.status !== 200) throw new Error(`Keycloak admin sign-in: HTTP ${response.status}`);
  return (JSON.parse(response.body) as { access_token: string }).access_token;
}

/** Adds `origin` to the client's redirect URIs and web origins (idempotent). */
export async function allowConsoleOrigin(options: {
  keycloakUrl: string;
  realm: string;
  clientId: string;
  origin: string;
  admin: { username: string; password: string };
}): Promise<void> {
  const token = await adminToken(options.keycloakUrl, options.admin.username, options.admin.password);
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const base = `${options.keycloakUrl}/admin/realms/${options.realm}/clients`;
  const found = await timedRequest(`${base}?clientId=${encodeURIComponent(options.clientId)}`, { headers });
  const client = (JSON.parse(found.body) as Array<Record<string, unknown> & { id: string }>)[0];
  if (found.status !== 200 || !client)
    throw new Error(`Keycloak client ${options.clientId} not found (HTTP ${found.status})`);
  const redirectUris = new Set((client.redirectUris as string[] | undefined) ?? []);
  const webOrigins = new Set((client.webOrigins as string[] | undefined) ?? []);
  redirectUris.add(`${options.origin}/*`);
  webOrigins.add(options.origin);
  const updated = await timedRequest(`${base}/${client.id}`, {
    method: "PUT",
    headers,
    body: JSON.stringify({ ...client, redirectUris: [...redirectUris], webOrigins: [...webOrigins] }),
  });
  if (updated.status !== 204)
    throw new Error(`Keycloak client update: HTTP ${updated.status} ${updated.body}`);
}

/** The login form's action URL in Keycloak's login page (HTML-escaped in the attribute). */
export function loginFormAction(html: string): string {
  const form = /<form[^>]*id="kc-form-login"[^>]*>/.exec(html)?.[0];
  const action = form ? /action="([^"]+)"/.exec(form)?.[1] : undefined;
  if (!action) throw new Error("no login form in Keycloak's page");
  return action.replaceAll("&amp;", "&");
}

/** Follows redirects by hand, keeping each origin's cookies apart. */
async function follow(
  url: string,
  jars: Map<string, CookieJar>,
  init: { method?: string; body?: string; contentType?: string } = {},
): Promise<{ url: string; response: TimedResponse }> {
  let current = url;
  let method = init.method ?? "GET";
  let body = init.body;
  for (let hop = 0; hop < 10; hop++) {
    const origin = new URL(current).origin;
    const jar = jars.get(origin) ?? new CookieJar();
    jars.set(origin, jar);
    const headers: Record<string, string> = { cookie: jar.header() };
    if (body !== undefined) headers["content-type"] = init.contentType ?? "application/x-www-form-urlencoded";
    const response = await timedRequest(current, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    jar.take(response.headers);
    const location = response.headers.location;
    if (response.status < 300 || response.status >= 400 || !location) return { url: current, response };
    current = new URL(location, current).toString();
    method = "GET";
    body = undefined;
  }
  throw new Error(`too many redirects from ${url}`);
}

/**
 * Signs `username` in to the console at `webUrl` and returns the console's cookies (the Auth.js
 * session cookie among them). Throws with the step that failed.
 */
export async function signInToConsole(
  webUrl: string,
  username: string,
  password: string,
): Promise<CookieJar> {
  const jars = new Map<string, CookieJar>();
  const webOrigin = new URL(webUrl).origin;
  let page = await follow(`${webUrl}/sign-in?callbackUrl=%2Ffleet`, jars);
  // With organizations on, Keycloak asks for the username first, then the password: fill in
  // whichever fields the form has until the flow leaves Keycloak.
  for (let step = 0; step < 4 && new URL(page.url).origin !== webOrigin; step++) {
    if (page.response.status !== 200)
      throw new Error(`Keycloak's login answered HTTP ${page.response.status} at ${page.url}`);
    const fields: Record<string, string> = { credentialId: "" };
    if (/name="username"/.test(page.response.body)) fields.username = username;
    if (/name="password"/.test(page.response.body)) fields.password = password;
    page = await follow(new URL(loginFormAction(page.response.body), page.url).toString(), jars, {
      method: "POST",
      body: new URLSearchParams(fields).toString(),
    });
  }
  const web = jars.get(webOrigin);
  if (!web?.names().some((name) => name.includes("session-token")))
    throw new Error(
      `no session cookie after signing in as ${username} (ended at ${page.url}, HTTP ${page.response.status})`,
    );
  return web;
}
