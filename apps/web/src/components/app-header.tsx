import Link from "next/link";
import type { Membership } from "~/auth";
import { signOutEverywhere } from "~/server/actions";
import styles from "./app-header.module.css";
import { OrganizationSwitcher } from "./organization-switcher";

export function AppHeader(props: { email: string; memberships: Membership[]; activeSlug: string | null }) {
  return (
    <header className={styles.header}>
      <span className={styles.brand}>Edgefleet</span>
      <nav className={styles.nav}>
        <Link href="/fleet">Fleet</Link>
        <Link href="/nodes">Nodes</Link>
        <Link href="/sites">Sites</Link>
        <Link href="/enrollment">Enrollment</Link>
        <Link href="/members">Members</Link>
        <Link href="/api-keys">API keys</Link>
        <Link href="/audit">Audit log</Link>
      </nav>
      <OrganizationSwitcher memberships={props.memberships} activeSlug={props.activeSlug} />
      <span className={styles.spacer} />
      <span className={styles.user} data-testid="user-email">
        {props.email}
      </span>
      <form action={signOutEverywhere}>
        <button type="submit">Sign out</button>
      </form>
    </header>
  );
}
