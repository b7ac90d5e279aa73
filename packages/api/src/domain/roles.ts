/** Roles and actors: who is acting, and how far their role reaches. */
import type { Role } from "@edgefleet/db";
import { z } from "zod";

/** Highest first. */
export const ROLES = ["owner", "admin", "operator", "viewer"] as const satisfies readonly Role[];
export const roleSchema = z.enum(ROLES);

const rank: Record<Role, number> = { owner: 3, admin: 2, operator: 1, viewer: 0 };

/** True when `role` may do what `needed` may do. */
export function roleAtLeast(role: Role, needed: Role): boolean {
  return rank[role] >= rank[needed];
}

/** The person or API key behind a request, with the role it holds in the active organization. */
export interface Actor {
  type: "user" | "apiKey";
  id: string;
  role: Role;
}
