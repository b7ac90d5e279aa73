import { organizationDetailPage } from "~/components/organization-page";
import { NodeDetail } from "./node-detail";

export const dynamic = "force-dynamic";

export default organizationDetailPage({
  route: "/nodes/[id]",
  title: "Node",
  view: (id, organization) => <NodeDetail key={organization.slug} id={id} />,
});
