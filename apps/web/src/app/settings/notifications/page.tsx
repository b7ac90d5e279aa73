import { PushSettings } from "~/components/alerts/push-settings";
import { OrganizationPage } from "~/components/organization-page";
import { env } from "~/env";

export const dynamic = "force-dynamic";

export default function NotificationSettingsPage() {
  return (
    <OrganizationPage
      path="/settings/notifications"
      title={(organization) => `Notifications · ${organization.name}`}
      description="Alerts on this phone or desktop, and which severities reach you."
    >
      {(organization) => (
        <PushSettings key={organization.slug} vapidPublicKey={env.EDGEFLEET_VAPID_PUBLIC_KEY ?? null} />
      )}
    </OrganizationPage>
  );
}
