import { OrganizationPage } from "~/components/organization-page";
import { EnrollmentView } from "./enrollment-view";

export const dynamic = "force-dynamic";

export default function EnrollmentPage() {
  return (
    <OrganizationPage path="/enrollment" title={(organization) => `Enrollment · ${organization.name}`}>
      {(organization) => <EnrollmentView key={organization.slug} role={organization.role} />}
    </OrganizationPage>
  );
}
