import { organizationListPage } from "~/components/organization-page";
import { MembersView } from "./members-view";

export const dynamic = "force-dynamic";

export default organizationListPage({
  path: "/members",
  view: (organization) => <MembersView key={organization.slug} />,
});
