/**
 * The identity provider's side of membership: Keycloak holds people and their organizations, and
 * a person's sign-in only opens the organizations Keycloak says they belong to. Inviting therefore
 * makes the person a member of the Keycloak organization (creating their account if needed), and
 * removing takes them out again, or their next sign-in would bring the membership back.
 *
 * Talks to the Keycloak Admin REST API as the console client's service account (client
 * credentials). The account needs realm-management roles manage-users, view-users, query-users,
 * manage-organizations, view-organizations and query-organizations (see the realm file).
 * There is no mail server: a new account gets a one-time password that the inviter hands over;
 * Keycloak asks for a new one at the first sign-in.
 */
import { randomBytes } from "node:crypto";

export interface DirectoryInvitation {
  /** True when the person had no account and one was made for them. */
  accountCreated: boolean;
  /** One-time password of a new account, to hand over; null for an existing account. */
  temporaryPassword: string | null;
}

export interface IdentityDirectory {
  /** Makes the person (by e-mail) a member of the organization; idempotent. */
  addMember(organizationSlug: string, email: string): Promise<DirectoryInvitation>;
  /** Takes the person out of the organization; nothing happens when they are not in it. */
  removeMember(organizationSlug: string, email: string): Promise<void>;
}

/** Keycloak answered something other than what the call needs (down, misconfigured, refused). */
export class IdentityDirectoryError extends Error {
  override name = "IdentityDirectoryError";
}

export interface KeycloakDirectoryConfig {
  /** The realm's issuer URL, e.g. http://127.0.0.1:8080/realms/edgefleet. */
  issuer: string;
  clientId: string;
  clientSecret: string;
}

const ISSUER = /^(.*)\/realms\/([^/]+)\/?$/;

export function keycloakDirectory(config: KeycloakDirectoryConfig): IdentityDirectory {
  // Parsed at first use, not here: `next build` imports this with the environment unset.
  const endpoints = () => {
    const match = ISSUER.exec(config.issuer ?? "");
    if (!match) {
      throw new IdentityDirectoryError(
        `issuer ${config.issuer} is not a Keycloak realm URL (…/realms/<realm>)`,
      );
    }
    const [, root, realm] = match;
    return {
      tokenUrl: `${root}/realms/${realm}/protocol/openid-connect/token`,
      adminUrl: `${root}/admin/realms/${realm}`,
    };
  };
  let cached: { token: string; until: number } | null = null;

  async function token(): Promise<string> {
    if (cached && cached.until > Date.now()) return cached.token;
    const { tokenUrl } = endpoints();
    const response = await fetch(tokenUrl, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: config.clientId,
        client_secret: config.clientSecret,
      }),
    }).catch((error: unknown) => {
      throw new IdentityDirectoryError(`Keycloak is unreachable at ${tokenUrl}: ${String(error)}`);
    });
    if (!response.ok) {
      throw new IdentityDirectoryError(
        `Keycloak refused the console's service account (${response.status}): ${await response.text()}`,
      );
    }
    const body = (await response.json()) as { access_token: string; expires_in: number };
    cached = { token: body.access_token, until: Date.now() + Math.max(0, body.expires_in - 30) * 1000 };
    return body.access_token;
  }

  /** One admin call; `accept` lists the statuses the caller handles itself besides 2xx. */
  async function admin(
    method: string,
    path: string,
    body?: unknown,
    accept: number[] = [],
  ): Promise<Response> {
    const { adminUrl } = endpoints();
    const response = await fetch(`${adminUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${await token()}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).catch((error: unknown) => {
      throw new IdentityDirectoryError(`Keycloak is unreachable at ${adminUrl}: ${String(error)}`);
    });
    if (!response.ok && !accept.includes(response.status)) {
      throw new IdentityDirectoryError(
        `Keycloak ${method} ${path} answered ${response.status}: ${(await response.text()).slice(0, 300)}`,
      );
    }
    return response;
  }

  async function organizationId(slug: string): Promise<string> {
    // `search` matches names and domains, not aliases: page through and compare aliases.
    for (let first = 0; ; first += 100) {
      const page = (await (
        await admin("GET", `/organizations?briefRepresentation=true&first=${first}&max=100`)
      ).json()) as Array<{ id: string; alias: string }>;
      const found = page.find((organization) => organization.alias === slug);
      if (found) return found.id;
      if (page.length < 100) break;
    }
    throw new IdentityDirectoryError(`Keycloak has no organization with alias "${slug}"`);
  }

  async function userIdByEmail(email: string): Promise<string | null> {
    const users = (await (
      await admin("GET", `/users?email=${encodeURIComponent(email)}&exact=true&briefRepresentation=true`)
    ).json()) as Array<{ id: string; email?: string }>;
    return users.find((user) => user.email?.toLowerCase() === email.toLowerCase())?.id ?? null;
  }

  return {
    async addMember(organizationSlug, email) {
      const orgId = await organizationId(organizationSlug);
      let userId = await userIdByEmail(email);
      let temporaryPassword: string | null = null;
      if (!userId) {
        temporaryPassword = randomBytes(12).toString("base64url");
        // The inviter vouches for the address (there is no mail server to verify it).
        const created = await admin(
          "POST",
          "/users",
          {
            username: email,
            email,
            enabled: true,
            emailVerified: true,
            requiredActions: ["UPDATE_PASSWORD"],
            credentials: [{ type: "password", value: temporaryPassword, temporary: true }],
          },
          [409],
        );
        if (created.status === 409) temporaryPassword = null; // made concurrently: use that one
        userId = await userIdByEmail(email);
        if (!userId)
          throw new IdentityDirectoryError(`Keycloak did not return the account made for ${email}`);
      }
      // 409: already a member.
      await admin("POST", `/organizations/${orgId}/members`, userId, [409]);
      return { accountCreated: temporaryPassword !== null, temporaryPassword };
    },

    async removeMember(organizationSlug, email) {
      const userId = await userIdByEmail(email);
      if (!userId) return;
      const orgId = await organizationId(organizationSlug);
      await admin("DELETE", `/organizations/${orgId}/members/${userId}`, undefined, [404]);
    },
  };
}
