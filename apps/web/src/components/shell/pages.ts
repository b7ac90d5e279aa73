import {
  BellIcon,
  BookOpenIcon,
  BoxIcon,
  GaugeIcon,
  KeyRoundIcon,
  LayoutDashboardIcon,
  type LucideIcon,
  MapPinIcon,
  RocketIcon,
  ScrollTextIcon,
  ServerIcon,
  TicketIcon,
  UsersIcon,
} from "lucide-react";

export interface ConsolePage {
  href: string;
  label: string;
  icon: LucideIcon;
  /** Other words the command palette matches. */
  keywords: string[];
  /** In the phone's bottom bar (the rest are in the drawer). */
  thumb?: boolean;
  /**
   * Not prefetched: the API reference is a separate heavy page (Scalar); prefetching it from the
   * sidebar of every page made every page preload its 260 KB stylesheet for a page rarely opened.
   */
  noPrefetch?: boolean;
}

/**
 * Every page of the console, in navigation order: the sidebar, the phone drawer and bottom bar
 * and the command palette all read this list. New pages are added here.
 */
export const CONSOLE_PAGES: ConsolePage[] = [
  {
    href: "/fleet",
    label: "Fleet",
    icon: LayoutDashboardIcon,
    keywords: ["overview", "dashboard"],
    thumb: true,
  },
  {
    href: "/nodes",
    label: "Nodes",
    icon: ServerIcon,
    keywords: ["devices", "labels", "selector"],
    thumb: true,
  },
  { href: "/sites", label: "Sites", icon: MapPinIcon, keywords: ["places", "leaf"], thumb: true },
  { href: "/apps", label: "Apps", icon: BoxIcon, keywords: ["software", "versions", "artifacts"] },
  {
    href: "/rollouts",
    label: "Rollouts",
    icon: RocketIcon,
    keywords: ["deploy", "release", "update", "batches"],
  },
  {
    href: "/alerts",
    label: "Alerts",
    icon: BellIcon,
    keywords: ["alerting", "policies", "silence", "quiet hours", "notifications", "channels"],
  },
  { href: "/enrollment", label: "Enrollment", icon: TicketIcon, keywords: ["tokens", "approve", "enroll"] },
  { href: "/members", label: "Members", icon: UsersIcon, keywords: ["people", "roles", "invite"] },
  { href: "/api-keys", label: "API keys", icon: KeyRoundIcon, keywords: ["tokens", "rest", "terraform"] },
  {
    href: "/settings/notifications",
    label: "Notifications",
    icon: BellIcon,
    keywords: ["push", "alerts", "phone", "e-mail", "preferences"],
  },
  { href: "/audit", label: "Audit log", icon: ScrollTextIcon, keywords: ["history", "who", "changes"] },
  {
    href: "/slo",
    label: "Service levels",
    icon: GaugeIcon,
    keywords: ["slo", "sli", "latency", "objectives", "p99"],
  },
  {
    href: "/api-docs",
    label: "API reference",
    icon: BookOpenIcon,
    keywords: ["openapi", "rest", "docs"],
    noPrefetch: true,
  },
];

export function isCurrent(pathname: string, href: string): boolean {
  return pathname === href || pathname.startsWith(`${href}/`);
}
