import { OrganizationPage } from "~/components/organization-page";
import { NodeDetail } from "./node-detail";

export const dynamic = "force-dynamic";

export default async function NodePage(props: { params: Promise<{ id: string }> }) {
  const { id } = await props.params;
  return (
    <OrganizationPage path={`/nodes/${id}`} title={() => "Node"}>
      {(organization) => <NodeDetail key={organization.slug} id={id} />}
    </OrganizationPage>
  );
}
