import { organizationListPage } from "~/components/organization-page";
import { FleetView } from "./fleet-view";

export const dynamic = "force-dynamic";

export default organizationListPage({
  path: "/fleet",
  view: (organization) => <FleetView key={organization.slug} />,
});
