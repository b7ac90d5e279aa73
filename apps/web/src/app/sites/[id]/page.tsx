import { organizationDetailPage } from "~/components/organization-page";
import { SiteDetail } from "./site-detail";

export const dynamic = "force-dynamic";

export default organizationDetailPage({
  route: "/sites/[id]",
  title: "Site",
  view: (id, organization) => <SiteDetail key={organization.slug} id={id} role={organization.role} />,
});
