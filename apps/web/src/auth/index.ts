import "server-only";
import { syncUserFromIdentity } from "@edgefleet/db";
import { cookies } from "next/headers";
import NextAuth, { type DefaultSession } from "next-auth";
import Keycloak from "next-auth/providers/keycloak";
import { z } from "zod";
import { env } from "~/env";
import { db } from "~/server/db";
import { ACTIVE_ORGANIZATION_COOKIE } from "./active-organization";
import { parseOrganizationClaim } from "./organization-claim";
import { publicRedirect } from "./safe-redirect";

const membershipSchema = z.object({
  organizationId: z.string(),
  slug: z.string(),
  name: z.string(),
  role: z.enum(["owner", "admin", "operator", "viewer"]),
});
export type Membership = z.infer<typeof membershipSchema>;

/** What we keep in the (encrypted) session JWT beyond Auth.js's defaults. */
const sessionClaims = z.object({
  userId: z.string(),
  email: z.string(),
  memberships: z.array(membershipSchema),
});

declare module "next-auth" {
  interface Session {
    user: { id: string } & DefaultSession["user"];
    memberships: Membership[];
  }
}

export const { handlers, auth, signIn, signOut } = NextAuth({
  secret: env.AUTH_SECRET,
  // AUTH_URL pins the public origin; trusting the Host header is then harmless.
  trustHost: true,
  session: { strategy: "jwt", maxAge: 12 * 60 * 60 },
  providers: [
    Keycloak({
      clientId: env.AUTH_KEYCLOAK_ID,
      clientSecret: env.AUTH_KEYCLOAK_SECRET,
      issuer: env.AUTH_KEYCLOAK_ISSUER,
      authorization: { params: { scope: "openid email profile organization" } },
    }),
  ],
  // Next.js presents 127.0.0.1 requests to route handlers as "localhost", so without this the
  // code exchange would send redirect_uri=http://localhost:…, which Keycloak rejects as not the
  // one used in the authorization request.
  redirectProxyUrl: new URL("/api/auth", env.AUTH_URL).toString(),
  pages: { signIn: "/sign-in", error: "/sign-in/problem" },
  callbacks: {
    redirect({ url, baseUrl }) {
      return publicRedirect(url, baseUrl, env.AUTH_URL);
    },
    async jwt({ token, account, profile }) {
      // `account` and `profile` are only present right after the OIDC callback: mirror the
      // identity and its Keycloak organizations into our database once per sign-in.
      if (account && profile) {
        if (!profile.sub || !profile.email) throw new Error("Keycloak profile lacks sub or email");
        const organizationSlugs = parseOrganizationClaim(profile.organization);
        const memberships = await syncUserFromIdentity(db, {
          subject: profile.sub,
          email: profile.email,
          name: profile.name ?? null,
          organizationSlugs,
        });
        const user = await db.user.findUniqueOrThrow({
          where: { keycloakSubject: profile.sub },
          select: { id: true, email: true },
        });
        token.userId = user.id;
        token.email = user.email;
        token.memberships = memberships;
        // Kept server-side only (the JWT cookie is encrypted) for Keycloak's logout endpoint.
        token.idToken = account.id_token;
      }
      return token;
    },
    session({ session, token }) {
      const claims = sessionClaims.parse(token);
      session.user.id = claims.userId;
      session.user.email = claims.email;
      session.memberships = claims.memberships;
      return session;
    },
  },
  events: {
    async signIn() {
      // A previous user's choice must not carry over to the next one on a shared browser.
      (await cookies()).delete(ACTIVE_ORGANIZATION_COOKIE);
    },
  },
});
