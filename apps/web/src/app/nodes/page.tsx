import { OrganizationPage } from "~/components/organization-page";
import { NodesView } from "./nodes-view";

export const dynamic = "force-dynamic";

export default function NodesPage() {
  return (
    <OrganizationPage path="/nodes" title={(organization) => `Nodes · ${organization.name}`}>
      {/* Filters, sorting and columns are read from the URL by the view itself. */}
      {(organization) => <NodesView key={organization.slug} />}
    </OrganizationPage>
  );
}
