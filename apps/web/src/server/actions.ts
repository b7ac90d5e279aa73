"use server";

import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { getToken } from "next-auth/jwt";
import { z } from "zod";
import { auth, signOut } from "~/auth";
import { ACTIVE_ORGANIZATION_COOKIE, isOrganizationSlug } from "~/auth/active-organization";
import { env } from "~/env";

/**
 * Switches the active organization. Refuses organizations missing from the session so the user
 * gets a clear error here; the API re-checks membership in the database on every request anyway.
 */
export async function selectOrganization(slug: string): Promise<void> {
  const session = await auth();
  if (!session) throw new Error("sign in first");
  if (typeof slug !== "string" || !isOrganizationSlug(slug)) throw new Error("invalid organization slug");
  if (!session.memberships.some((m) => m.slug === slug)) {
    throw new Error(`you are not a member of organization "${slug}"`);
  }
  (await cookies()).set(ACTIVE_ORGANIZATION_COOKIE, slug, {
    httpOnly: true,
    sameSite: "lax",
    secure: env.AUTH_URL.startsWith("https://"),
    path: "/",
    maxAge: 60 * 60 * 24 * 365,
  });
}

/** Ends the local session and the Keycloak SSO session, then returns to the start page. */
export async function signOutEverywhere(): Promise<never> {
  const token = await getToken({
    req: { headers: await headers() },
    secret: env.AUTH_SECRET,
    secureCookie: env.AUTH_URL.startsWith("https://"),
  });
  await signOut({ redirect: false });
  const logout = new URL(`${env.AUTH_KEYCLOAK_ISSUER}/protocol/openid-connect/logout`);
  logout.searchParams.set("client_id", env.AUTH_KEYCLOAK_ID);
  logout.searchParams.set("post_logout_redirect_uri", new URL("/", env.AUTH_URL).toString());
  const idToken = z.string().safeParse(token?.idToken);
  if (idToken.success) logout.searchParams.set("id_token_hint", idToken.data);
  redirect(logout.toString());
}
