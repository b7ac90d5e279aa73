import { organizationListPage } from "~/components/organization-page";
import { SloView } from "./slo-view";

export const dynamic = "force-dynamic";

export default organizationListPage({
  path: "/slo",
  description: "What this organization experienced, next to the objectives Edgefleet holds itself to.",
  view: (organization) => <SloView key={organization.slug} />,
});
