import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { auth } from "~/auth";
import { ACTIVE_ORGANIZATION_COOKIE, pickActiveOrganization } from "~/auth/active-organization";
import { AppHeader } from "~/components/app-header";
import styles from "./fleet.module.css";
import { FleetView } from "./fleet-view";

export const dynamic = "force-dynamic";

export default async function FleetPage() {
  const session = await auth();
  if (!session?.user?.email) redirect("/sign-in?callbackUrl=/fleet");

  const activeSlug = pickActiveOrganization(
    (await cookies()).get(ACTIVE_ORGANIZATION_COOKIE)?.value,
    session.memberships,
  );
  const activeOrganization = session.memberships.find((m) => m.slug === activeSlug);

  return (
    <>
      <AppHeader email={session.user.email} memberships={session.memberships} activeSlug={activeSlug} />
      <main className={styles.main}>
        {activeOrganization ? (
          <>
            <h1 className={styles.title}>Fleet · {activeOrganization.name}</h1>
            {/* Keyed by organization so switching starts from a clean state (search, pages). */}
            <FleetView key={activeOrganization.slug} />
          </>
        ) : activeSlug ? (
          <p role="alert" className={styles.error}>
            You are not a member of organization “{activeSlug}”. Pick one of your organizations above.
          </p>
        ) : (
          <p>You are not a member of any organization yet. Ask an owner to invite you.</p>
        )}
      </main>
    </>
  );
}
