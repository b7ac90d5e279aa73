import type { ReactNode } from "react";
import type { Membership } from "~/auth";
import { BottomBar } from "./bottom-bar";
import { Brand } from "./brand";
import { CommandPaletteProvider } from "./command-palette";
import { MainNav } from "./main-nav";
import { OrganizationSwitcher } from "./organization-switcher";
import { SearchButton } from "./search-button";
import { ThemeToggle } from "./theme-toggle";
import { UserMenu } from "./user-menu";

/**
 * The frame of every signed-in page: sidebar from md up, header with organization, search, theme
 * and account, and on phones a bottom bar with a drawer. Content scrolls; the frame stays.
 */
export function AppShell(props: {
  email: string;
  memberships: Membership[];
  activeSlug: string | null;
  children: ReactNode;
}) {
  return (
    <CommandPaletteProvider>
      <div className="min-h-dvh md:grid md:grid-cols-[15rem_minmax(0,1fr)]">
        <aside className="sticky top-0 hidden h-dvh flex-col gap-6 border-r bg-card/60 p-3 md:flex">
          <div className="px-3 pt-2">
            <Brand />
          </div>
          <MainNav />
        </aside>
        <div className="flex min-w-0 flex-col">
          <header className="sticky top-0 z-30 flex h-14 items-center gap-2 border-b bg-background/90 px-3 backdrop-blur md:px-6">
            <span className="md:hidden [&_a]:text-[0px] [&_a]:gap-0">
              <Brand />
            </span>
            <OrganizationSwitcher memberships={props.memberships} activeSlug={props.activeSlug} />
            <div className="ml-auto flex items-center gap-1">
              <SearchButton />
              <ThemeToggle />
              <UserMenu email={props.email} />
            </div>
          </header>
          <main className="mx-auto grid w-full max-w-7xl min-w-0 flex-1 content-start gap-6 px-3 py-4 pb-24 md:px-6 md:py-6 md:pb-10">
            {props.children}
          </main>
        </div>
        <BottomBar />
      </div>
    </CommandPaletteProvider>
  );
}
