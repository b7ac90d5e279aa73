import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { auth, type Membership } from "~/auth";
import { ACTIVE_ORGANIZATION_COOKIE, pickActiveOrganization } from "~/auth/active-organization";
import { ErrorNotice } from "./error-notice";
import { AppShell } from "./shell/app-shell";
import { CONSOLE_PAGES } from "./shell/pages";
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

/**
 * The page of one of an organization's lists (`/apps`, `/sites`, …): "<name> · <organization>"
 * as its title, the name being the page's own in the navigation (`shell/pages.ts`), the view keyed
 * by organization so switching starts from a clean cache.
 */
export function organizationListPage(options: {
  path: string;
  description?: ReactNode;
  view: (organization: Membership) => ReactNode;
}) {
  const name = CONSOLE_PAGES.find((page) => page.href === options.path)?.label;
  // Made at module load: a list page missing from the navigation fails the build, not a visit.
  if (!name) throw new Error(`${options.path} is not in CONSOLE_PAGES (components/shell/pages.ts)`);
  // biome-ignore lint/correctness/noComponentHookFactories: made once per route at module load (a page's default export), never during a render
  return function ListPage() {
    return (
      <OrganizationPage
        path={options.path}
        title={(organization) => `${name} · ${organization.name}`}
        description={options.description}
      >
        {options.view}
      </OrganizationPage>
    );
  };
}

/** The name of a route's one dynamic segment: `id` for "/sites/[id]". */
type RouteParam<Route extends string> = Route extends `${string}[${infer Param}]` ? Param : never;

/**
 * The page of one thing of an organization (`/apps/[appId]`, `/sites/[id]`, …), titled by its
 * kind; the view, keyed by organization, loads the thing itself (and says when it is not found).
 */
export function organizationDetailPage<Route extends `/${string}/[${string}]`>(options: {
  /** The page's route as its folder names it, e.g. "/sites/[id]". */
  route: Route;
  title: string;
  view: (id: string, organization: Membership) => ReactNode;
}) {
  const param = /\[(\w+)\]$/.exec(options.route)?.[1] as RouteParam<Route>;
  // biome-ignore lint/correctness/noComponentHookFactories: made once per route at module load (a page's default export), never during a render
  return async function DetailPage(props: { params: Promise<Record<RouteParam<Route>, string>> }) {
    const id = (await props.params)[param];
    return (
      <OrganizationPage path={options.route.replace(`[${param}]`, id)} title={() => options.title}>
        {(organization) => options.view(id, organization)}
      </OrganizationPage>
    );
  };
}
