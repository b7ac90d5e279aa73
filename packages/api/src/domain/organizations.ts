/** Organizations a user belongs to. Global data (not tenant-scoped): filtered by user id. */
import type { Db } from "@edgefleet/db";
import { z } from "zod";

export const roleSchema = z.enum(["owner", "admin", "operator", "viewer"]);

export const myOrganization = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  role: roleSchema,
});
export type MyOrganization = z.infer<typeof myOrganization>;

/** The caller's organization as the API shows it (id, slug, name, the caller's role). */
export function currentOrganization(organization: MyOrganization): MyOrganization {
  return { id: organization.id, slug: organization.slug, name: organization.name, role: organization.role };
}

export async function listOrganizationsOfUser(db: Db, userId: string): Promise<MyOrganization[]> {
  const memberships = await db.membership.findMany({
    where: { userId },
    select: { role: true, organization: { select: { id: true, slug: true, name: true } } },
    orderBy: { organization: { slug: "asc" } },
  });
  return memberships.map((m) => ({ ...m.organization, role: m.role }));
}
