import { OrganizationPage } from "~/components/organization-page";
import { type AuditFilters, auditFilterKeys } from "./audit-filters";
import { AuditView } from "./audit-view";

export const dynamic = "force-dynamic";

export default async function AuditPage(props: { searchParams: Promise<Record<string, string | string[]>> }) {
  const params = await props.searchParams;
  const initial: AuditFilters = {};
  for (const key of auditFilterKeys) {
    const value = params[key];
    if (typeof value === "string" && value) initial[key] = value;
  }
  return (
    <OrganizationPage path="/audit" title={(organization) => `Audit log · ${organization.name}`}>
      {(organization) => <AuditView key={organization.slug} initial={initial} />}
    </OrganizationPage>
  );
}
