import { OrganizationPage } from "~/components/organization-page";
import { NewRollout } from "./new-rollout";

export const dynamic = "force-dynamic";

export default async function NewRolloutPage(props: {
  searchParams: Promise<{ appId?: string; versionId?: string }>;
}) {
  const { appId, versionId } = await props.searchParams;
  return (
    <OrganizationPage
      path={`/rollouts/new${appId ? `?appId=${encodeURIComponent(appId)}` : ""}`}
      title={() => "New rollout"}
      description="Pick a version, the nodes it goes to and how: batch by batch, with pauses and approvals. Preview the batches, then start."
    >
      {(organization) => (
        <NewRollout key={organization.slug} role={organization.role} appId={appId} versionId={versionId} />
      )}
    </OrganizationPage>
  );
}
