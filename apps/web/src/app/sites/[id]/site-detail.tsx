"use client";

import { updateSiteInput } from "@edgefleet/api/schemas";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { DetailCard, DetailCards } from "~/components/detail-card";
import { EditNameForm } from "~/components/forms/edit-name-form";
import { RelativeTime } from "~/components/relative-time";
import { type Role, roleDenial } from "~/components/role-reason";
import { NODE_STATUS_COLOURS } from "~/components/status-badge";
import { Button } from "~/components/ui/button";
import { Section } from "~/components/ui/card";
import { cn } from "~/lib/utils";
import { useTRPC } from "~/trpc/react";
import { siteNodesHref } from "../sites-view";
import { LeafBundle } from "./leaf-bundle";
import { SiteProbes } from "./site-probes";

export function SiteDetail(props: { id: string; role: Role }) {
  const trpc = useTRPC();
  const site = useQuery(
    trpc.site.byId.queryOptions({ id: props.id }, { refetchInterval: 5_000, retry: false }),
  );
  const denied = roleDenial(props.role, "admin");
  return (
    <DetailCards query={site} loading="Loading the site">
      {(data) => (
        <>
          <DetailCard
            id="site-title"
            title={data.name}
            actions={
              <Button asChild size="sm">
                <Link href={`/enrollment?site=${data.id}`}>Enroll nodes here</Link>
              </Button>
            }
            facts={[
              { term: "Description", value: data.description ?? "—" },
              { term: "Id", value: data.id, className: "font-mono break-all" },
              { term: "Created", value: <RelativeTime date={data.createdAt} /> },
            ]}
          >
            <div className="grid grid-cols-2 gap-2 sm:grid-cols-4" data-testid="site-counts">
              {NODE_STATUS_COLOURS.map(({ status, className }) => (
                <div key={status} className="rounded-lg border p-3">
                  <strong
                    data-testid={`count-${status}`}
                    className={cn("block text-2xl tabular-nums", className)}
                  >
                    {data.byStatus[status] ?? 0}
                  </strong>
                  <span className="text-sm text-muted-foreground">{status}</span>
                </div>
              ))}
            </div>
            <Link href={siteNodesHref(data.name)} className="text-sm text-primary hover:underline">
              Show the {data.total} node{data.total === 1 ? "" : "s"} of {data.name}
            </Link>
          </DetailCard>
          <Section title="Network probes">
            <SiteProbes siteId={data.id} />
          </Section>
          <Section title="Leaf node">
            <LeafBundle siteId={data.id} disabledReason={denied} />
          </Section>
          <EditNameForm
            noun="site"
            record={data}
            schema={updateSiteInput}
            save={trpc.site.update.mutationOptions()}
            remove={trpc.site.delete.mutationOptions()}
            deleteConsequence={
              data.total > 0
                ? `${data.name} still has ${data.total} nodes; the server will refuse until they are moved or deleted.`
                : "The site and its leaf-node credentials are deleted."
            }
            disabledReason={denied}
          />
        </>
      )}
    </DetailCards>
  );
}
