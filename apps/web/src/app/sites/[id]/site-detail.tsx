"use client";

import { type ROLES, roleAtLeast } from "@edgefleet/api/roles";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import table from "~/components/admin-table.module.css";
import { ConfirmButton } from "~/components/confirm-button";
import { timeAgo } from "~/components/time-ago";
import { useTRPC } from "~/trpc/react";
import styles from "../sites.module.css";
import { siteNodesHref } from "../sites-view";
import { LeafBundle } from "./leaf-bundle";

type Role = (typeof ROLES)[number];

const STATUSES = ["online", "offline", "pending", "revoked"] as const;

export function SiteDetail(props: { id: string; role: Role }) {
  const trpc = useTRPC();
  const site = useQuery(
    trpc.site.byId.queryOptions({ id: props.id }, { refetchInterval: 5_000, retry: false }),
  );
  const denied = roleAtLeast(props.role, "admin") ? null : `needs the admin role; you are ${props.role}`;
  if (site.error) {
    return (
      <p role="alert" className={table.error}>
        {site.error.message}
      </p>
    );
  }
  if (!site.data) return <p className={table.note}>Loading…</p>;
  const data = site.data;
  return (
    <>
      <h2 className="mono" data-testid="site-title">
        {data.name}
      </h2>
      <dl className={styles.identity}>
        <dt>Description</dt>
        <dd>{data.description ?? "—"}</dd>
        <dt>Id</dt>
        <dd>
          <code>{data.id}</code>
        </dd>
        <dt>Created</dt>
        <dd title={data.createdAt.toISOString()}>{timeAgo(data.createdAt)}</dd>
      </dl>
      <section className={styles.section} aria-labelledby="site-nodes">
        <h2 id="site-nodes">Nodes</h2>
        <div className={styles.counts} data-testid="site-counts">
          {STATUSES.map((status) => (
            <div key={status} className={`${styles.count} ${styles[status] ?? ""}`}>
              <strong data-testid={`count-${status}`}>{data.byStatus[status] ?? 0}</strong>
              <span>{status}</span>
            </div>
          ))}
        </div>
        <Link href={siteNodesHref(data.name)}>
          Show the {data.total} node{data.total === 1 ? "" : "s"} of {data.name}
        </Link>
        {" · "}
        <Link href={`/enrollment?site=${data.id}`}>Enroll nodes here</Link>
      </section>
      <section className={styles.section} aria-labelledby="leaf">
        <h2 id="leaf">Leaf node</h2>
        <LeafBundle siteId={data.id} disabledReason={denied} />
      </section>
      <section className={styles.section} aria-labelledby="edit-site">
        <h2 id="edit-site">Edit</h2>
        <EditSite
          id={data.id}
          name={data.name}
          description={data.description}
          total={data.total}
          disabledReason={denied}
        />
      </section>
    </>
  );
}

function EditSite(props: {
  id: string;
  name: string;
  description: string | null;
  total: number;
  disabledReason: string | null;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [name, setName] = useState(props.name);
  const [description, setDescription] = useState(props.description ?? "");
  const [problem, setProblem] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const update = useMutation(
    trpc.site.update.mutationOptions({
      onSuccess: (site) => {
        setProblem(null);
        setNotice(`Saved ${site.name}`);
        return queryClient.invalidateQueries();
      },
      onError: (error) => setProblem(error.message),
    }),
  );
  const remove = useMutation(
    trpc.site.delete.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries(trpc.site.list.queryFilter());
        router.push("/sites");
      },
      onError: (error) => setProblem(error.message),
    }),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setNotice(null);
    update.mutate({ id: props.id, name, description: description.trim() ? description : null });
  };
  return (
    <>
      <form className={table.form} aria-label="Edit the site" onSubmit={submit}>
        <label>
          <span>Name</span>
          <input aria-label="New site name" required value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label className={table.grow}>
          <span>Description</span>
          <input
            aria-label="New site description"
            value={description}
            onChange={(e) => setDescription(e.target.value)}
          />
        </label>
        <button
          type="submit"
          disabled={update.isPending || Boolean(props.disabledReason)}
          title={props.disabledReason ?? undefined}
        >
          Save
        </button>
        <ConfirmButton
          label="Delete site"
          question={
            props.total > 0
              ? `${props.name} still has ${props.total} nodes; the server will refuse. Try anyway?`
              : `Delete ${props.name}?`
          }
          confirmLabel="Yes, delete"
          disabledReason={props.disabledReason}
          pending={remove.isPending}
          onConfirm={() => remove.mutate({ id: props.id })}
        />
      </form>
      {problem ? (
        <p role="alert" className={table.error}>
          {problem}
        </p>
      ) : null}
      {notice ? <p role="status">{notice}</p> : null}
    </>
  );
}
