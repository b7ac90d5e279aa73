"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { roleAtLeast } from "@edgefleet/api/roles";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import styles from "~/components/admin-table.module.css";
import { ConfirmButton } from "~/components/confirm-button";
import { CopyOnce } from "~/components/copy-once";
import { type Role, RoleSelect } from "~/components/role-select";
import { SubmitRow } from "~/components/submit-row";
import { timeAgo } from "~/components/time-ago";
import { useTRPC } from "~/trpc/react";

type ApiKey = RouterOutputs["apiKey"]["list"]["items"][number];

export function ApiKeysView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // The caller's role comes from the member list (any member may read it); keys need admin.
  const members = useQuery(trpc.member.list.queryOptions());
  const keys = useQuery(trpc.apiKey.list.queryOptions(undefined, { retry: false }));
  const [problem, setProblem] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const revoke = useMutation(
    trpc.apiKey.revoke.mutationOptions({
      onSuccess: (key) => {
        setProblem(null);
        setNotice(`API key “${key.name}” revoked`);
        return queryClient.invalidateQueries(trpc.apiKey.list.queryFilter());
      },
      onError: (error) => setProblem(error.message),
    }),
  );
  const myRole = members.data?.caller.role ?? null;
  const emailByUserId = new Map(members.data?.items.map((m) => [m.userId, m.email]));
  const denied = myRole && !roleAtLeast(myRole, "admin") ? `needs the admin role; you are ${myRole}` : null;

  return (
    <>
      <p className={styles.note}>
        Keys act for this organization over the REST API (<code>Authorization: Bearer efk_…</code>), with the
        role they were given, which is at most yours. <a href="/api-docs">API reference</a>
      </p>
      <CreateKeyForm
        myRole={myRole}
        disabledReason={denied}
        onCreated={() => {
          setProblem(null);
          setNotice(null);
          return queryClient.invalidateQueries(trpc.apiKey.list.queryFilter());
        }}
      />
      {problem ? (
        <p role="alert" className={styles.error}>
          {problem}
        </p>
      ) : null}
      {notice ? <p role="status">{notice}</p> : null}
      {keys.isPending ? (
        <p className={styles.note}>Loading API keys…</p>
      ) : keys.error ? (
        <p role="alert" className={styles.error}>
          {keys.error.message}
        </p>
      ) : keys.data.items.length === 0 ? (
        <p className={styles.note}>No API keys yet.</p>
      ) : (
        <table className={styles.table}>
          <thead>
            <tr>
              <th>Name</th>
              <th>Role</th>
              <th>Key</th>
              <th>Created by</th>
              <th>Created</th>
              <th>Last used</th>
              <th>State</th>
              <th>Actions</th>
            </tr>
          </thead>
          <tbody>
            {keys.data.items.map((key) => (
              <KeyRow
                key={key.id}
                apiKey={key}
                creator={describeCreator(key.createdBy, emailByUserId)}
                disabledReason={denied}
                pending={revoke.isPending}
                onRevoke={() => revoke.mutate({ id: key.id })}
              />
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function keyState(key: ApiKey): { label: string; className: string } {
  if (key.revokedAt) return { label: `revoked ${timeAgo(key.revokedAt)}`, className: styles.revoked ?? "" };
  if (key.expiresAt && key.expiresAt <= new Date())
    return { label: "expired", className: styles.revoked ?? "" };
  if (key.expiresAt) return { label: `expires ${key.expiresAt.toLocaleDateString()}`, className: "" };
  return { label: "active", className: "" };
}

function KeyRow(props: {
  apiKey: ApiKey;
  creator: string;
  disabledReason: string | null;
  pending: boolean;
  onRevoke: () => void;
}) {
  const key = props.apiKey;
  const state = keyState(key);
  return (
    <tr data-testid="api-key-row" data-name={key.name}>
      <td data-label="Name">{key.name}</td>
      <td data-label="Role">{key.role}</td>
      <td data-label="Key">
        <code>{key.prefix}…</code>
      </td>
      <td data-label="Created by">{props.creator}</td>
      <td data-label="Created" title={key.createdAt.toISOString()}>
        {timeAgo(key.createdAt)}
      </td>
      <td data-label="Last used" title={key.lastUsedAt?.toISOString()}>
        {timeAgo(key.lastUsedAt)}
      </td>
      <td data-label="State">
        <span className={`${styles.badge} ${state.className}`} data-testid="api-key-state">
          {state.label}
        </span>
      </td>
      <td data-label="Actions">
        {key.revokedAt ? null : (
          <ConfirmButton
            label="Revoke"
            question={`Revoke “${key.name}”? Scripts using it stop working at once.`}
            disabledReason={props.disabledReason}
            pending={props.pending}
            onConfirm={props.onRevoke}
          />
        )}
      </td>
    </tr>
  );
}

/** `user:<id>` or `apiKey:<id>`, as the domain stores it. */
function describeCreator(createdBy: string | null, emailByUserId: Map<string, string>): string {
  if (!createdBy) return "—";
  const [type, id = ""] = createdBy.split(":");
  if (type === "apiKey") return `API key ${id.slice(0, 8)}`;
  return emailByUserId.get(id) ?? `former member ${id.slice(0, 8)}`;
}

function CreateKeyForm(props: {
  myRole: Role | null;
  disabledReason: string | null;
  onCreated: () => unknown;
}) {
  const trpc = useTRPC();
  const [name, setName] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const [expires, setExpires] = useState("");
  const [created, setCreated] = useState<RouterOutputs["apiKey"]["create"] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const create = useMutation(
    trpc.apiKey.create.mutationOptions({
      onSuccess: (key) => {
        setProblem(null);
        setName("");
        setExpires("");
        setCreated(key);
        return props.onCreated();
      },
      onError: (error) => setProblem(error.message),
    }),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    // The date input gives a day; the key stays valid until the end of that day, local time.
    const expiresAt = expires ? new Date(`${expires}T23:59:59`) : undefined;
    create.mutate({ name, role, ...(expiresAt ? { expiresAt } : {}) });
  };
  return (
    <>
      <form className={styles.form} aria-label="Create an API key" onSubmit={submit}>
        <label className={styles.grow}>
          <span>Name</span>
          <input
            aria-label="Key name"
            required
            maxLength={100}
            placeholder="terraform-ci"
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
        </label>
        <label>
          <span>Role</span>
          <RoleSelect
            label="Key role"
            value={role}
            onChange={setRole}
            allowed={(r) => (props.myRole ? roleAtLeast(props.myRole, r) : true)}
          />
        </label>
        <label>
          <span>Expires (optional)</span>
          <input
            type="date"
            aria-label="Expires on"
            value={expires}
            onChange={(event) => setExpires(event.target.value)}
          />
        </label>
        <SubmitRow
          label="Create key"
          pendingLabel="Creating…"
          pending={create.isPending}
          disabledReason={props.disabledReason}
          problem={problem}
        />
      </form>
      {created ? <CopyOnce label="API key" secret={created.key} onDismiss={() => setCreated(null)} /> : null}
    </>
  );
}
