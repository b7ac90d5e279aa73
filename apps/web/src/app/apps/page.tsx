import { organizationListPage } from "~/components/organization-page";
import { AppsView } from "./apps-view";

export const dynamic = "force-dynamic";

export default organizationListPage({
  path: "/apps",
  description: "The software your nodes run: each app has immutable versions, deployed by rollouts.",
  view: (organization) => <AppsView key={organization.slug} role={organization.role} />,
});
