import { OrganizationPage } from "~/components/organization-page";
import { SiteDetail } from "./site-detail";

export const dynamic = "force-dynamic";

export default async function SitePage(props: { params: Promise<{ id: string }> }) {
  const { id } = await props.params;
  return (
    <OrganizationPage path={`/sites/${id}`} title={() => "Site"}>
      {(organization) => <SiteDetail key={organization.slug} id={id} role={organization.role} />}
    </OrganizationPage>
  );
}
