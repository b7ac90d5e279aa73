import { type ROLES, roleAtLeast } from "@edgefleet/api/roles";

export type Role = (typeof ROLES)[number];

/** Why this person may not do what needs `needed` (null: they may); shown next to disabled controls. */
export function roleDenial(role: Role, needed: Role): string | null {
  return roleAtLeast(role, needed) ? null : `needs the ${needed} role; you are ${role}`;
}
