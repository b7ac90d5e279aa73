import { organizationDetailPage } from "~/components/organization-page";
import { AppDetail } from "./app-detail";

export const dynamic = "force-dynamic";

export default organizationDetailPage({
  route: "/apps/[appId]",
  title: "App",
  view: (id, organization) => <AppDetail key={organization.slug} id={id} role={organization.role} />,
});
