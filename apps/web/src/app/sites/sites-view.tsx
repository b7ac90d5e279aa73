"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { createSiteInput } from "@edgefleet/api/schemas";
import { useQuery } from "@tanstack/react-query";
import { MapPinIcon } from "lucide-react";
import Link from "next/link";
import { linkColumn, textColumn } from "~/components/data-table/columns";
import type { DataColumn } from "~/components/data-table/data-table";
import { QueryTable } from "~/components/data-table/query-table";
import { CreateNameForm } from "~/components/forms/create-name-form";
import { type Role, roleDenial } from "~/components/role-reason";
import { Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { useTRPC } from "~/trpc/react";

type SiteRow = RouterOutputs["site"]["list"][number];

/** Node counts move as agents come and go: poll. */
const REFRESH_MS = 5_000;

/** Nodes page filtered to a site: enrolled and seeded nodes carry the `site=<name>` label. */
export function siteNodesHref(name: string): string {
  return `/nodes?selector=${encodeURIComponent(`site=${name}`)}`;
}

const count = (
  status: "online" | "offline" | "pending" | "revoked",
  className: string,
): DataColumn<SiteRow> => ({
  id: status,
  accessorFn: (site) => site.byStatus[status] ?? 0,
  meta: { title: status[0]?.toUpperCase() + status.slice(1), className: `tabular-nums ${className}` },
});

const columns: DataColumn<SiteRow>[] = [
  linkColumn(
    "name",
    "Site",
    (site) => (site.id && site.name ? { text: site.name, href: `/sites/${site.id}` } : null),
    { className: "font-medium", none: "no site" },
  ),
  textColumn("description", "Description", (site) => site.description),
  {
    id: "total",
    accessorFn: (site) => site.total,
    meta: { title: "Nodes", className: "tabular-nums" },
    cell: ({ row }) =>
      row.original.name ? (
        <Link href={siteNodesHref(row.original.name)} className="text-primary hover:underline">
          {row.original.total}
        </Link>
      ) : (
        row.original.total
      ),
  },
  count("online", "text-online"),
  count("offline", "text-offline"),
  count("pending", "text-pending"),
  count("revoked", ""),
];

const noSites = (
  <EmptyState icon={<MapPinIcon />} title="No sites yet">
    A site is a place with nodes. Create one above; its page then generates the leaf node that keeps the site
    working offline.
  </EmptyState>
);

export function SitesView(props: { role: Role }) {
  const trpc = useTRPC();
  const sites = useQuery(trpc.site.list.queryOptions(undefined, { refetchInterval: REFRESH_MS }));
  const denied = roleDenial(props.role, "admin");
  return (
    <>
      <CreateNameForm
        noun="site"
        description={
          <>
            A site is a place with nodes (a plant, a depot, a vehicle). Its NATS leaf node lets the
            site&apos;s agents keep working locally when the link to the cloud is down; generate its
            configuration on the site&apos;s page.
          </>
        }
        schema={createSiteInput}
        create={trpc.site.create.mutationOptions()}
        placeholders={{ name: "plant-7", description: "Plant 7, Rotterdam" }}
        disabledReason={denied}
      />
      <Section title="Sites">
        <QueryTable
          query={sites}
          label="Sites"
          columnChooser
          columns={columns}
          getRowId={(site) => site.id ?? "none"}
          rowTestId="site-row"
          empty={noSites}
        />
      </Section>
    </>
  );
}
