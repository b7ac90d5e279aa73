/** Filters as they appear in the URL (and in the export link): the names audit.list takes. */
export const auditFilterKeys = [
  "action",
  "actorType",
  "actorId",
  "targetType",
  "targetId",
  "from",
  "to",
] as const;
export type AuditFilters = Partial<Record<(typeof auditFilterKeys)[number], string>>;

export function toQueryString(filters: AuditFilters): string {
  const params = new URLSearchParams();
  for (const key of auditFilterKeys) {
    const value = filters[key];
    if (value) params.set(key, value);
  }
  return params.toString();
}
