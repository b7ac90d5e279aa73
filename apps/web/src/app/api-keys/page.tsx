import { OrganizationPage } from "~/components/organization-page";
import { ApiKeysView } from "./api-keys-view";

export const dynamic = "force-dynamic";

export default function ApiKeysPage() {
  return (
    <OrganizationPage path="/api-keys" title={(organization) => `API keys · ${organization.name}`}>
      {(organization) => <ApiKeysView key={organization.slug} />}
    </OrganizationPage>
  );
}
