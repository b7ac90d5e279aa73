import { organizationListPage } from "~/components/organization-page";
import { ApiKeysView } from "./api-keys-view";

export const dynamic = "force-dynamic";

export default organizationListPage({
  path: "/api-keys",
  view: (organization) => <ApiKeysView key={organization.slug} />,
});
