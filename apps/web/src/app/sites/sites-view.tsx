"use client";

import { type ROLES, roleAtLeast } from "@edgefleet/api/roles";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import table from "~/components/admin-table.module.css";
import { SubmitRow } from "~/components/submit-row";
import { useTRPC } from "~/trpc/react";
import styles from "./sites.module.css";

type Role = (typeof ROLES)[number];

/** Node counts move as agents come and go: poll. */
const REFRESH_MS = 5_000;

/** Nodes page filtered to a site: enrolled and seeded nodes carry the `site=<name>` label. */
export function siteNodesHref(name: string): string {
  return `/nodes?selector=${encodeURIComponent(`site=${name}`)}`;
}

export function SitesView(props: { role: Role }) {
  const trpc = useTRPC();
  const sites = useQuery(trpc.site.list.queryOptions(undefined, { refetchInterval: REFRESH_MS }));
  const denied = roleAtLeast(props.role, "admin") ? null : `needs the admin role; you are ${props.role}`;
  return (
    <>
      <p className={table.note}>
        A site is a place with nodes (a plant, a depot, a vehicle). Its NATS leaf node lets the site&apos;s
        agents keep working locally when the link to the cloud is down; generate its configuration on the
        site&apos;s page.
      </p>
      <CreateSiteForm disabledReason={denied} />
      {sites.error ? (
        <p role="alert" className={table.error}>
          {sites.error.message}
        </p>
      ) : sites.isPending ? (
        <p className={table.note}>Loading sites…</p>
      ) : (
        <table className={table.table} data-testid="sites">
          <thead>
            <tr>
              <th>Site</th>
              <th>Description</th>
              <th>Nodes</th>
              <th>Online</th>
              <th>Offline</th>
              <th>Pending</th>
              <th>Revoked</th>
            </tr>
          </thead>
          <tbody>
            {sites.data.map((site) => (
              <tr key={site.id ?? "none"} data-testid="site-row" data-name={site.name ?? ""}>
                <td data-label="Site">
                  {site.id && site.name ? (
                    <Link href={`/sites/${site.id}`}>{site.name}</Link>
                  ) : (
                    <span className={table.note}>no site</span>
                  )}
                </td>
                <td data-label="Description">{site.description ?? "—"}</td>
                <td data-label="Nodes">
                  {site.name ? <Link href={siteNodesHref(site.name)}>{site.total}</Link> : site.total}
                </td>
                <td data-label="Online" className={styles.online}>
                  {site.byStatus.online ?? 0}
                </td>
                <td data-label="Offline" className={styles.offline}>
                  {site.byStatus.offline ?? 0}
                </td>
                <td data-label="Pending" className={styles.pending}>
                  {site.byStatus.pending ?? 0}
                </td>
                <td data-label="Revoked">{site.byStatus.revoked ?? 0}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function CreateSiteForm(props: { disabledReason: string | null }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const create = useMutation(
    trpc.site.create.mutationOptions({
      onSuccess: async (site) => {
        await queryClient.invalidateQueries(trpc.site.list.queryFilter());
        router.push(`/sites/${site.id}`);
      },
      onError: (error) => setProblem(error.message),
    }),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    create.mutate({ name, ...(description.trim() ? { description } : {}) });
  };
  return (
    <form className={table.form} aria-label="Create a site" onSubmit={submit}>
      <label>
        <span>Name</span>
        <input
          aria-label="Site name"
          required
          maxLength={63}
          placeholder="plant-7"
          value={name}
          onChange={(event) => setName(event.target.value)}
        />
      </label>
      <label className={table.grow}>
        <span>Description</span>
        <input
          aria-label="Site description"
          maxLength={500}
          placeholder="Plant 7, Rotterdam"
          value={description}
          onChange={(event) => setDescription(event.target.value)}
        />
      </label>
      <SubmitRow
        label="Create site"
        pendingLabel="Creating…"
        pending={create.isPending}
        disabledReason={props.disabledReason}
        problem={problem}
      />
    </form>
  );
}
