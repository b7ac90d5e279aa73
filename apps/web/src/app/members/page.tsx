import { OrganizationPage } from "~/components/organization-page";
import { MembersView } from "./members-view";

export const dynamic = "force-dynamic";

export default function MembersPage() {
  return (
    <OrganizationPage path="/members" title={(organization) => `Members · ${organization.name}`}>
      {(organization) => <MembersView key={organization.slug} />}
    </OrganizationPage>
  );
}
