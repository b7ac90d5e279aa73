"use client";

import type { SearchKind } from "@edgefleet/api/schemas";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import {
  BoxIcon,
  CircleOffIcon,
  LogOutIcon,
  MapPinIcon,
  PlusIcon,
  RocketIcon,
  ServerIcon,
} from "lucide-react";
import { useRouter } from "next/navigation";
import { useTheme } from "next-themes";
import { createContext, type ReactNode, useContext, useDeferredValue, useEffect, useState } from "react";
import { signOutEverywhere } from "~/server/actions";
import { useTRPC } from "~/trpc/react";
import {
  CommandDialog,
  CommandEmpty,
  CommandGroup,
  CommandInput,
  CommandItem,
  CommandList,
  CommandShortcut,
} from "../ui/command";
import { requestFocusTarget } from "./focus-target";
import { CONSOLE_PAGES } from "./pages";
import { THEMES } from "./theme-toggle";

/**
 * Where a search hit of each kind opens. Typed by the API's `searchKinds`: a new searchable kind
 * fails to compile until its page is named here.
 */
const HIT_TARGETS: Record<
  SearchKind,
  { group: string; href: (id: string) => string; icon: typeof ServerIcon }
> = {
  node: { group: "Nodes", href: (id) => `/nodes/${id}`, icon: ServerIcon },
  site: { group: "Sites", href: (id) => `/sites/${id}`, icon: MapPinIcon },
  app: { group: "Apps", href: (id) => `/apps/${id}`, icon: BoxIcon },
  rollout: { group: "Rollouts", href: (id) => `/rollouts/${id}`, icon: RocketIcon },
};

/** Common actions: a page, optionally with the form to focus on it. */
const ACTIONS = [
  {
    label: "New enrollment token",
    href: "/enrollment#new-token",
    focus: "new-token",
    keywords: ["enroll", "add node"],
  },
  { label: "Create a site", href: "/sites#new-site", focus: "new-site", keywords: ["add site", "place"] },
  { label: "Create an app", href: "/apps#new-app", focus: "new-app", keywords: ["add app", "deploy"] },
  { label: "Invite a member", href: "/members#invite", focus: "invite", keywords: ["add person", "user"] },
  {
    label: "Create an API key",
    href: "/api-keys#new-key",
    focus: "new-key",
    keywords: ["token", "terraform"],
  },
  { label: "Show offline nodes", href: "/nodes?status=offline", focus: null, keywords: ["down", "red"] },
  {
    label: "Show nodes waiting for approval",
    href: "/enrollment#pending-nodes",
    focus: null,
    keywords: ["pending", "approve"],
  },
];

const PaletteContext = createContext<{ open: () => void }>({ open: () => {} });

export function usePalette() {
  return useContext(PaletteContext);
}

/** ⌘K / Ctrl-K anywhere (or "/" outside a text field) opens "find anything". */
export function CommandPaletteProvider({ children }: { children: ReactNode }) {
  const [open, setOpen] = useState(false);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const typing =
        event.target instanceof HTMLElement &&
        event.target.closest("input, textarea, select, [contenteditable=true]");
      if ((event.key === "k" || event.key === "K") && (event.metaKey || event.ctrlKey)) {
        event.preventDefault();
        setOpen((was) => !was);
      } else if (event.key === "/" && !typing && !event.metaKey && !event.ctrlKey) {
        event.preventDefault();
        setOpen(true);
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
  return (
    <PaletteContext.Provider value={{ open: () => setOpen(true) }}>
      {children}
      {open ? <CommandPalette onClose={() => setOpen(false)} /> : null}
    </PaletteContext.Provider>
  );
}

function CommandPalette(props: { onClose: () => void }) {
  const trpc = useTRPC();
  const router = useRouter();
  const { setTheme } = useTheme();
  const [text, setText] = useState("");
  const query = useDeferredValue(text.trim());
  const search = useQuery(
    trpc.search.byName.queryOptions(
      { query },
      { enabled: query.length > 0, placeholderData: keepPreviousData, staleTime: 10_000, retry: false },
    ),
  );
  const run = (action: () => void) => {
    props.onClose();
    action();
  };
  const go = (href: string, focus?: string | null) =>
    run(() => {
      router.push(href);
      if (focus) requestFocusTarget(focus);
    });
  const hits = query.length > 0 ? (search.data?.hits ?? []) : [];

  return (
    <CommandDialog
      open
      onOpenChange={(open) => (open ? null : props.onClose())}
      title="Find anything"
      description="Jump to a node, site, app, rollout or page by name, or run an action"
    >
      <CommandInput
        aria-label="Find anything"
        placeholder="Jump to a node, site, app, rollout or page, or run an action…"
        value={text}
        onValueChange={setText}
      />
      <CommandList>
        <CommandEmpty>
          {search.isFetching
            ? "Searching…"
            : search.error
              ? search.error.message
              : `Nothing is called “${text}”.`}
        </CommandEmpty>
        {(Object.keys(HIT_TARGETS) as SearchKind[]).map((kind) => {
          const ofKind = hits.filter((hit) => hit.kind === kind);
          if (ofKind.length === 0) return null;
          const target = HIT_TARGETS[kind];
          return (
            <CommandGroup key={kind} heading={target.group}>
              {ofKind.map((hit) => (
                <CommandItem
                  key={hit.id}
                  value={`${kind} ${hit.name} ${hit.id}`}
                  keywords={[hit.name]}
                  onSelect={() => go(target.href(hit.id))}
                >
                  <target.icon aria-hidden />
                  <span className="font-mono">{hit.name}</span>
                  {hit.detail ? (
                    <span className="truncate text-xs text-muted-foreground">{hit.detail}</span>
                  ) : null}
                </CommandItem>
              ))}
            </CommandGroup>
          );
        })}
        <CommandGroup heading="Pages">
          {CONSOLE_PAGES.map((page) => (
            <CommandItem
              key={page.href}
              value={`page ${page.label}`}
              keywords={page.keywords}
              onSelect={() => go(page.href)}
            >
              <page.icon aria-hidden />
              {page.label}
            </CommandItem>
          ))}
        </CommandGroup>
        <CommandGroup heading="Actions">
          {ACTIONS.map((action) => (
            <CommandItem
              key={action.label}
              value={`action ${action.label}`}
              keywords={action.keywords}
              onSelect={() => go(action.href, action.focus)}
            >
              {action.focus ? <PlusIcon aria-hidden /> : <CircleOffIcon aria-hidden />}
              {action.label}
            </CommandItem>
          ))}
          {THEMES.map((theme) => (
            <CommandItem
              key={theme.value}
              value={`action ${theme.label} theme`}
              keywords={[...theme.keywords]}
              onSelect={() => run(() => setTheme(theme.value))}
            >
              <theme.icon aria-hidden />
              {theme.action}
            </CommandItem>
          ))}
          <CommandItem
            value="action Sign out"
            keywords={["log out"]}
            onSelect={() => run(() => void signOutEverywhere())}
          >
            <LogOutIcon aria-hidden />
            Sign out
            <CommandShortcut>everywhere</CommandShortcut>
          </CommandItem>
        </CommandGroup>
      </CommandList>
    </CommandDialog>
  );
}
