"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { cn } from "~/lib/utils";
import { CONSOLE_PAGES, isCurrent } from "./pages";

/** The page links of the sidebar (desktop) and of the drawer (phones). */
export function MainNav(props: { onNavigate?: () => void; className?: string }) {
  const pathname = usePathname();
  return (
    <nav aria-label="Main" className={cn("grid gap-0.5", props.className)}>
      {CONSOLE_PAGES.map((page) => {
        const current = isCurrent(pathname, page.href);
        return (
          <Link
            key={page.href}
            href={page.href}
            prefetch={page.noPrefetch ? false : undefined}
            onClick={props.onNavigate}
            aria-current={current ? "page" : undefined}
            className={cn(
              "flex items-center gap-3 rounded-md px-3 py-2 text-sm font-medium text-muted-foreground transition-colors outline-none hover:bg-accent hover:text-accent-foreground focus-visible:ring-[3px] focus-visible:ring-ring/50",
              current && "bg-accent text-accent-foreground",
            )}
          >
            <page.icon aria-hidden className="size-4" />
            {page.label}
          </Link>
        );
      })}
    </nav>
  );
}
