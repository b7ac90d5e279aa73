import { OrganizationPage } from "~/components/organization-page";
import { FleetView } from "./fleet-view";

export const dynamic = "force-dynamic";

export default function FleetPage() {
  return (
    <OrganizationPage path="/fleet" title={(organization) => `Fleet · ${organization.name}`}>
      {/* Keyed by organization so switching starts from a clean cache. */}
      {(organization) => <FleetView key={organization.slug} />}
    </OrganizationPage>
  );
}
