import { organizationListPage } from "~/components/organization-page";
import { SitesView } from "./sites-view";

export const dynamic = "force-dynamic";

export default organizationListPage({
  path: "/sites",
  view: (organization) => <SitesView key={organization.slug} role={organization.role} />,
});
