import { OrganizationPage } from "~/components/organization-page";
import { AppsView } from "./apps-view";

export const dynamic = "force-dynamic";

export default function AppsPage() {
  return (
    <OrganizationPage
      path="/apps"
      title={(organization) => `Apps · ${organization.name}`}
      description="The software your nodes run: each app has immutable versions, deployed by rollouts."
    >
      {(organization) => <AppsView key={organization.slug} role={organization.role} />}
    </OrganizationPage>
  );
}
