"use client";

import { MenuIcon, SearchIcon } from "lucide-react";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useState } from "react";
import { cn } from "~/lib/utils";
import { Sheet, SheetContent, SheetDescription, SheetTitle } from "../ui/sheet";
import { Brand } from "./brand";
import { usePalette } from "./command-palette";
import { MainNav } from "./main-nav";
import { CONSOLE_PAGES, isCurrent } from "./pages";

const item =
  "flex min-w-0 flex-col items-center justify-center gap-0.5 text-[0.7rem] font-medium text-muted-foreground outline-none focus-visible:bg-accent aria-[current=page]:text-primary [&_svg]:size-5";

/**
 * Phones: the pages used most under the thumb, search, and a drawer with everything else. Fixed
 * to the bottom edge, above the home indicator (safe-area inset).
 */
export function BottomBar() {
  const pathname = usePathname();
  const palette = usePalette();
  const [drawer, setDrawer] = useState(false);
  return (
    <>
      <nav
        aria-label="Phone navigation"
        className="fixed inset-x-0 bottom-0 z-40 grid h-16 grid-cols-5 border-t bg-background/95 pb-[env(safe-area-inset-bottom)] backdrop-blur md:hidden"
      >
        {CONSOLE_PAGES.filter((page) => page.thumb).map((page) => (
          <Link
            key={page.href}
            href={page.href}
            className={item}
            aria-current={isCurrent(pathname, page.href) ? "page" : undefined}
          >
            <page.icon aria-hidden />
            {page.label}
          </Link>
        ))}
        <button type="button" className={item} onClick={palette.open}>
          <SearchIcon aria-hidden />
          Search
        </button>
        <button type="button" className={cn(item)} onClick={() => setDrawer(true)} aria-haspopup="dialog">
          <MenuIcon aria-hidden />
          More
        </button>
      </nav>
      <Sheet open={drawer} onOpenChange={setDrawer}>
        <SheetContent side="left">
          <SheetTitle asChild>
            <div>
              <Brand />
            </div>
          </SheetTitle>
          <SheetDescription className="sr-only">All pages of the console</SheetDescription>
          <MainNav onNavigate={() => setDrawer(false)} />
        </SheetContent>
      </Sheet>
    </>
  );
}
