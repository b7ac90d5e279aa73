import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { auth, type Membership } from "~/auth";
import { ACTIVE_ORGANIZATION_COOKIE, pickActiveOrganization } from "~/auth/active-organization";
import { ErrorNotice } from "./error-notice";
import { AppShell } from "./shell/app-shell";
import { EmptyState } from "./ui/empty-state";

/**
 * Shell of every page that shows one organization's data: sign-in redirect, the app frame, and
 * the "not a member" message for a cookie naming a foreign organization. The API checks
 * membership again on every call; this only decides what to render.
 */
export async function OrganizationPage(props: {
  /** Where to come back after signing in. */
  path: string;
  title: (organization: Membership) => ReactNode;
  /** One line under the title: what this page is for. */
  description?: ReactNode;
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
    <AppShell email={session.user.email} memberships={session.memberships} activeSlug={activeSlug}>
      {organization ? (
        <>
          <div className="grid gap-1">
            <h1 className="text-2xl font-semibold tracking-tight text-balance">
              {props.title(organization)}
            </h1>
            {props.description ? <p className="text-sm text-muted-foreground">{props.description}</p> : null}
          </div>
          {props.children(organization)}
        </>
      ) : activeSlug ? (
        <ErrorNotice
          error={`You are not a member of organization “${activeSlug}”. Pick one of your organizations above.`}
        />
      ) : (
        <EmptyState title="You are not a member of any organization yet.">
          Ask an owner of your organization to invite you; you will see it here at your next sign-in.
        </EmptyState>
      )}
    </AppShell>
  );
}
