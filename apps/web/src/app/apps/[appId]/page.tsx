import { OrganizationPage } from "~/components/organization-page";
import { AppDetail } from "./app-detail";

export const dynamic = "force-dynamic";

export default async function AppPage(props: { params: Promise<{ appId: string }> }) {
  const { appId } = await props.params;
  return (
    <OrganizationPage path={`/apps/${appId}`} title={() => "App"}>
      {(organization) => <AppDetail key={organization.slug} id={appId} role={organization.role} />}
    </OrganizationPage>
  );
}
