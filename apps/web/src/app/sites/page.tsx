import { OrganizationPage } from "~/components/organization-page";
import { SitesView } from "./sites-view";

export const dynamic = "force-dynamic";

export default function SitesPage() {
  return (
    <OrganizationPage path="/sites" title={(organization) => `Sites · ${organization.name}`}>
      {(organization) => <SitesView key={organization.slug} role={organization.role} />}
    </OrganizationPage>
  );
}
