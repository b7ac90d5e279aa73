"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import tableStyles from "~/components/admin-table.module.css";
import { useTRPC } from "~/trpc/react";
import styles from "./audit.module.css";
import { AuditDiff } from "./audit-diff";
import { type AuditFilters, toQueryString } from "./audit-filters";

type Entry = RouterOutputs["audit"]["list"]["items"][number];

const PAGE_SIZE = 50;
/** Actions the API writes today; the field also takes any other action or a prefix ending in ".". */
const KNOWN_ACTIONS = [
  "member.",
  "member.invite",
  "member.updateRole",
  "member.remove",
  "apiKey.",
  "apiKey.create",
  "apiKey.revoke",
  "enrollmentToken.",
  "node.",
];

/** ISO instant -> the value a datetime-local input shows (local time, minutes). */
function toLocalInput(iso: string | undefined): string {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

function fromLocalInput(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export function AuditView({ initial }: { initial: AuditFilters }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [filters, setFilters] = useState<AuditFilters>(initial);
  const members = useQuery(trpc.member.list.queryOptions());
  const apiKeys = useQuery(trpc.apiKey.list.queryOptions(undefined, { retry: false }));
  const entries = useInfiniteQuery(
    trpc.audit.list.infiniteQueryOptions(
      {
        limit: PAGE_SIZE,
        ...(filters.action ? { action: filters.action } : {}),
        ...(filters.actorType ? { actorType: filters.actorType as Entry["actorType"] } : {}),
        ...(filters.actorId ? { actorId: filters.actorId } : {}),
        ...(filters.targetType ? { targetType: filters.targetType } : {}),
        ...(filters.targetId ? { targetId: filters.targetId } : {}),
        ...(filters.from ? { from: new Date(filters.from) } : {}),
        ...(filters.to ? { to: new Date(filters.to) } : {}),
      },
      { getNextPageParam: (page) => page.nextCursor, retry: false },
    ),
  );

  const emailByUserId = new Map(members.data?.items.map((m) => [m.userId, m.email]));
  const keyNameById = new Map(apiKeys.data?.items.map((k) => [k.id, k.name]));
  const who = (entry: Pick<Entry, "actorType" | "actorId">) => {
    if (entry.actorType === "system") return "system";
    const id = entry.actorId ?? "";
    if (entry.actorType === "apiKey") return `API key ${keyNameById.get(id) ?? id.slice(0, 8)}`;
    return emailByUserId.get(id) ?? `former member ${id.slice(0, 8)}`;
  };

  const apply = (next: AuditFilters) => {
    setFilters(next);
    const query = toQueryString(next);
    router.replace(query ? `/audit?${query}` : "/audit", { scroll: false });
  };
  const items = entries.data?.pages.flatMap((page) => page.items) ?? [];
  const query = toQueryString(filters);

  return (
    <>
      <FilterForm
        filters={filters}
        onApply={apply}
        actors={[
          ...(members.data?.items.map((m) => ({ value: `user:${m.userId}`, label: m.email })) ?? []),
          ...(apiKeys.data?.items.map((k) => ({ value: `apiKey:${k.id}`, label: `API key ${k.name}` })) ??
            []),
        ]}
      />
      <p className={styles.exports}>
        <span>Export what the filters select:</span>
        <a href={`/audit/export?format=csv${query ? `&${query}` : ""}`} download data-testid="export-csv">
          CSV
        </a>
        <a href={`/audit/export?format=jsonl${query ? `&${query}` : ""}`} download data-testid="export-jsonl">
          JSON lines
        </a>
        <span className={styles.muted}>
          Scripts: <code>GET /api/v1/audit/export?format=csv</code> with an API key.
        </span>
      </p>
      {entries.error ? (
        <p role="alert" className={tableStyles.error}>
          {entries.error.message}
        </p>
      ) : entries.isPending ? (
        <p className={styles.muted}>Loading the audit log…</p>
      ) : items.length === 0 ? (
        <p className={styles.muted}>No entries match these filters.</p>
      ) : (
        <table className={tableStyles.table}>
          <thead>
            <tr>
              <th>When</th>
              <th>Who</th>
              <th>Action</th>
              <th>Target</th>
              <th>Change</th>
            </tr>
          </thead>
          <tbody>
            {items.map((entry) => (
              <tr key={entry.id} data-testid="audit-row" data-action={entry.action}>
                <td data-label="When" title={entry.createdAt.toISOString()}>
                  {entry.createdAt.toLocaleString()}
                </td>
                <td data-label="Who">{who(entry)}</td>
                <td data-label="Action">
                  <code>{entry.action}</code>
                </td>
                <td data-label="Target">
                  <Target entry={entry} describe={{ emailByUserId, keyNameById }} />
                </td>
                <td data-label="Change">
                  <details>
                    <summary>before / after</summary>
                    <AuditDiff before={entry.before} after={entry.after} />
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {entries.hasNextPage ? (
        <button
          type="button"
          className={styles.more}
          disabled={entries.isFetchingNextPage}
          onClick={() => void entries.fetchNextPage()}
        >
          {entries.isFetchingNextPage ? "Loading…" : "Load more"}
        </button>
      ) : null}
    </>
  );
}

/** A removed member or deleted thing is no longer listed: its recorded state still names it. */
function recordedName(entry: Entry): string | undefined {
  for (const state of [entry.after, entry.before]) {
    if (state && typeof state === "object") {
      const { email, name } = state as { email?: unknown; name?: unknown };
      if (typeof email === "string") return email;
      if (typeof name === "string") return name;
    }
  }
  return undefined;
}

function Target(props: {
  entry: Entry;
  describe: { emailByUserId: Map<string, string>; keyNameById: Map<string, string> };
}) {
  const { targetType, targetId } = props.entry;
  if (!targetId) return <span>{targetType}</span>;
  if (targetType === "node") return <Link href={`/nodes/${targetId}`}>node {targetId.slice(0, 8)}</Link>;
  const name =
    (targetType === "member"
      ? props.describe.emailByUserId.get(targetId)
      : targetType === "apiKey"
        ? props.describe.keyNameById.get(targetId)
        : undefined) ?? recordedName(props.entry);
  return (
    <span title={targetId}>
      {targetType} {name ?? targetId.slice(0, 8)}
    </span>
  );
}

function FilterForm(props: {
  filters: AuditFilters;
  actors: Array<{ value: string; label: string }>;
  onApply: (filters: AuditFilters) => void;
}) {
  const f = props.filters;
  const [action, setAction] = useState(f.action ?? "");
  const [actor, setActor] = useState(f.actorType && f.actorId ? `${f.actorType}:${f.actorId}` : "");
  const [targetType, setTargetType] = useState(f.targetType ?? "");
  const [targetId, setTargetId] = useState(f.targetId ?? "");
  const [from, setFrom] = useState(toLocalInput(f.from));
  const [to, setTo] = useState(toLocalInput(f.to));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const [actorType, actorId] = actor ? actor.split(":") : [];
    props.onApply({
      action: action.trim() || undefined,
      actorType: actorType || undefined,
      actorId: actorId || undefined,
      targetType: targetType || undefined,
      targetId: targetId.trim() || undefined,
      from: fromLocalInput(from),
      to: fromLocalInput(to),
    });
  };
  const clear = () => {
    setAction("");
    setActor("");
    setTargetType("");
    setTargetId("");
    setFrom("");
    setTo("");
    props.onApply({});
  };

  return (
    <form className={styles.filters} aria-label="Filter the audit log" onSubmit={submit}>
      <label>
        <span>Action</span>
        <input
          aria-label="Action"
          list="audit-actions"
          placeholder="member. or apiKey.revoke"
          value={action}
          maxLength={100}
          onChange={(event) => setAction(event.target.value)}
        />
        <datalist id="audit-actions">
          {KNOWN_ACTIONS.map((a) => (
            <option key={a} value={a} />
          ))}
        </datalist>
      </label>
      <label>
        <span>Who</span>
        <select aria-label="Who" value={actor} onChange={(event) => setActor(event.target.value)}>
          <option value="">anyone</option>
          {props.actors.map((a) => (
            <option key={a.value} value={a.value}>
              {a.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>Target</span>
        <select
          aria-label="Target type"
          value={targetType}
          onChange={(event) => setTargetType(event.target.value)}
        >
          <option value="">any</option>
          {["member", "apiKey", "enrollmentToken", "node", "site"].map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </label>
      <label>
        <span>Target id</span>
        <input
          aria-label="Target id"
          placeholder="id"
          value={targetId}
          maxLength={100}
          onChange={(event) => setTargetId(event.target.value)}
        />
      </label>
      <label>
        <span>From</span>
        <input
          type="datetime-local"
          aria-label="Earliest time"
          value={from}
          onChange={(event) => setFrom(event.target.value)}
        />
      </label>
      <label>
        <span>To</span>
        <input
          type="datetime-local"
          aria-label="Latest time"
          value={to}
          onChange={(event) => setTo(event.target.value)}
        />
      </label>
      <button type="submit">Apply filters</button>
      <button type="button" onClick={clear}>
        Clear
      </button>
    </form>
  );
}
