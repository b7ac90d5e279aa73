import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { auth, type Membership } from "~/auth";
import { ACTIVE_ORGANIZATION_COOKIE, pickActiveOrganization } from "~/auth/active-organization";
import { AppHeader } from "./app-header";
import styles from "./organization-page.module.css";

/**
 * Shell of every page that shows one organization's data: sign-in redirect, header, and the
 * "not a member" message for a cookie naming a foreign organization. The API checks membership
 * again on every call; this only decides what to render.
 */
export async function OrganizationPage(props: {
  /** Where to come back after signing in. */
  path: string;
  title: (organization: Membership) => ReactNode;
  children: (organization: Membership) => ReactNode;
}) {
  const session = await auth();
  if (!session?.user?.email) redirect(`/sign-in?callbackUrl=${encodeURIComponent(props.path)}`);

  const activeSlug = pickActiveOrganization(
    (await cookies()).get(ACTIVE_ORGANIZATION_COOKIE)?.value,
    session.memberships,
  );
  const organization = session.memberships.find((m) => m.slug === activeSlug);

  return (
    <>
      <AppHeader email={session.user.email} memberships={session.memberships} activeSlug={activeSlug} />
      <main className={styles.main}>
        {organization ? (
          <>
            <h1 className={styles.title}>{props.title(organization)}</h1>
            {props.children(organization)}
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
