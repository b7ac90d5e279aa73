import { OrganizationPage } from "~/components/organization-page";
import { RolloutsTable } from "./rollouts-table";

export const dynamic = "force-dynamic";

export default function RolloutsPage() {
  return (
    <OrganizationPage
      path="/rollouts"
      title={(organization) => `Rollouts · ${organization.name}`}
      description="App versions moving onto nodes in batches; open one to watch it live and act on it."
    >
      {(organization) => <RolloutsTable key={organization.slug} />}
    </OrganizationPage>
  );
}
