import { OrganizationPage } from "~/components/organization-page";
import { EnrollmentView } from "./enrollment-view";

export const dynamic = "force-dynamic";

export default async function EnrollmentPage(props: { searchParams: Promise<{ site?: string | string[] }> }) {
  // `?site=<id>`: preselects the site of the new token (the site page links here).
  const { site } = await props.searchParams;
  return (
    <OrganizationPage path="/enrollment" title={(organization) => `Enrollment · ${organization.name}`}>
      {(organization) => (
        <EnrollmentView
          key={organization.slug}
          role={organization.role}
          initialSiteId={typeof site === "string" ? site : ""}
        />
      )}
    </OrganizationPage>
  );
}
