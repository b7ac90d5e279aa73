import { OrganizationPage } from "~/components/organization-page";
import { RolloutLive } from "./rollout-live";

export const dynamic = "force-dynamic";

export default async function RolloutPage(props: { params: Promise<{ id: string }> }) {
  const { id } = await props.params;
  return (
    <OrganizationPage path={`/rollouts/${id}`} title={() => "Rollout"}>
      {(organization) => <RolloutLive key={organization.slug} id={id} />}
    </OrganizationPage>
  );
}
