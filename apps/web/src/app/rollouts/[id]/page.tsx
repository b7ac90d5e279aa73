import { organizationDetailPage } from "~/components/organization-page";
import { RolloutLive } from "./rollout-live";

export const dynamic = "force-dynamic";

export default organizationDetailPage({
  route: "/rollouts/[id]",
  title: "Rollout",
  view: (id, organization) => <RolloutLive key={organization.slug} id={id} />,
});
