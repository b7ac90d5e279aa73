import { organizationListPage } from "~/components/organization-page";
import { RolloutsTable } from "./rollouts-table";

export const dynamic = "force-dynamic";

export default organizationListPage({
  path: "/rollouts",
  description: "App versions moving onto nodes in batches; open one to watch it live and act on it.",
  view: (organization) => <RolloutsTable key={organization.slug} />,
});
