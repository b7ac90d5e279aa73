import { organizationListPage } from "~/components/organization-page";
import { NodesView } from "./nodes-view";

export const dynamic = "force-dynamic";

// Filters, sorting and columns are read from the URL by the view itself.
export default organizationListPage({
  path: "/nodes",
  view: (organization) => <NodesView key={organization.slug} />,
});
