import { OrganizationPage } from "~/components/organization-page";
import { NodesView } from "./nodes-view";

export const dynamic = "force-dynamic";

export default async function NodesPage(props: { searchParams: Promise<{ selector?: string | string[] }> }) {
  const { selector } = await props.searchParams;
  const initialSelector = typeof selector === "string" ? selector : "";
  return (
    <OrganizationPage path="/nodes" title={(organization) => `Nodes · ${organization.name}`}>
      {(organization) => <NodesView key={organization.slug} initialSelector={initialSelector} />}
    </OrganizationPage>
  );
}
