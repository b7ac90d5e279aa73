import { organizationListPage } from "~/components/organization-page";
import { AlertsView } from "./alerts-view";

export const dynamic = "force-dynamic";

export default organizationListPage({
  path: "/alerts",
  view: (organization) => <AlertsView key={organization.slug} role={organization.role} />,
});
