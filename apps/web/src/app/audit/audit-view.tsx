"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { listAuditInput } from "@edgefleet/api/schemas";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { DownloadIcon, ScrollTextIcon } from "lucide-react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { z } from "zod";
import type { DataColumn } from "~/components/data-table/data-table";
import { QueryTable } from "~/components/data-table/query-table";
import { ApiForm } from "~/components/forms/api-form";
import { SelectField, TextField } from "~/components/forms/fields";
import { FormFooter } from "~/components/forms/form-footer";
import { optionalChoice } from "~/components/forms/text-fields";
import { useApiForm } from "~/components/forms/use-api-form";
import { Button } from "~/components/ui/button";
import { Card } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { useTRPC } from "~/trpc/react";
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
  "site.",
];
const TARGET_TYPES = ["member", "apiKey", "enrollmentToken", "node", "site"];

/** ISO instant -> the value a datetime-local input shows (local time, minutes). */
function toLocalInput(iso: string | undefined): string {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** A datetime-local value judged by the API's date field, kept as an ISO instant for the URL. */
const localTime = (api: typeof listAuditInput.shape.from) =>
  optionalChoice(api).transform((date) => date?.toISOString());

/** The filters as typed, each judged by the API's own field of audit.list. */
const filterForm = z.object({
  action: optionalChoice(listAuditInput.shape.action),
  actor: z.string(),
  targetType: optionalChoice(listAuditInput.shape.targetType),
  targetId: optionalChoice(listAuditInput.shape.targetId),
  from: localTime(listAuditInput.shape.from),
  to: localTime(listAuditInput.shape.to),
});

const noEntries = (
  <EmptyState icon={<ScrollTextIcon />} title="No entries match these filters.">
    Every change made in this organization is recorded here. Widen the time range or clear the filters.
  </EmptyState>
);

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
  const who = (entry: Pick<Entry, "actorType" | "actorId" | "actorName">) => {
    if (entry.actorType === "system") return "system";
    // Named by the server with the entry, so the column never waits on (or guesses from) other lists.
    const id = entry.actorId ?? "";
    if (entry.actorType === "apiKey") return `API key ${entry.actorName ?? id.slice(0, 8)}`;
    return entry.actorName ?? `former member ${id.slice(0, 8)}`;
  };

  const apply = (next: AuditFilters) => {
    setFilters(next);
    const query = toQueryString(next);
    router.replace(query ? `/audit?${query}` : "/audit", { scroll: false });
  };
  const query = toQueryString(filters);
  const columns: DataColumn<Entry>[] = [
    {
      id: "when",
      accessorFn: (entry) => entry.createdAt,
      sortingFn: "datetime",
      meta: { title: "When", className: "whitespace-nowrap" },
      cell: ({ row }) => (
        <time dateTime={row.original.createdAt.toISOString()}>{row.original.createdAt.toLocaleString()}</time>
      ),
    },
    { id: "who", accessorFn: who, meta: { title: "Who", className: "break-all" } },
    {
      id: "action",
      accessorKey: "action",
      meta: { title: "Action" },
      cell: ({ row }) => <code className="text-xs">{row.original.action}</code>,
    },
    {
      id: "target",
      accessorFn: (entry) => entry.targetType,
      meta: { title: "Target" },
      cell: ({ row }) => <Target entry={row.original} describe={{ emailByUserId, keyNameById }} />,
    },
    {
      id: "change",
      enableSorting: false,
      meta: { title: "Change" },
      cell: ({ row }) => (
        <details className="text-left">
          <summary className="cursor-pointer text-primary">before / after</summary>
          <AuditDiff before={row.original.before} after={row.original.after} />
        </details>
      ),
    },
  ];

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
      <Card aria-label="Audit entries">
        <div className="flex flex-wrap items-center gap-2 text-sm">
          <span className="text-muted-foreground">Export what the filters select:</span>
          <Button asChild variant="outline" size="sm">
            <a href={`/audit/export?format=csv${query ? `&${query}` : ""}`} download data-testid="export-csv">
              <DownloadIcon aria-hidden />
              CSV
            </a>
          </Button>
          <Button asChild variant="outline" size="sm">
            <a
              href={`/audit/export?format=jsonl${query ? `&${query}` : ""}`}
              download
              data-testid="export-jsonl"
            >
              <DownloadIcon aria-hidden />
              JSON lines
            </a>
          </Button>
          <span className="text-xs text-muted-foreground">
            Scripts: <code>GET /api/v1/audit/export?format=csv</code> with an API key.
          </span>
        </div>
        <QueryTable
          query={entries}
          skeletonClassName="h-48"
          label="Audit log"
          columnChooser
          columns={columns}
          rowTestId="audit-row"
          rowData={(entry) => ({ action: entry.action })}
          empty={noEntries}
        />
      </Card>
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
  if (targetType === "node")
    return (
      <Link href={`/nodes/${targetId}`} className="text-primary hover:underline">
        node {targetId.slice(0, 8)}
      </Link>
    );
  const name =
    (targetType === "member"
      ? props.describe.emailByUserId.get(targetId)
      : targetType === "apiKey"
        ? props.describe.keyNameById.get(targetId)
        : undefined) ?? recordedName(props.entry);
  return (
    <span title={targetId} className="break-all">
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
  const empty = { action: "", actor: "", targetType: "", targetId: "", from: "", to: "" };
  const form = useApiForm(filterForm, {
    action: f.action ?? "",
    actor: f.actorType && f.actorId ? `${f.actorType}:${f.actorId}` : "",
    targetType: f.targetType ?? "",
    targetId: f.targetId ?? "",
    from: toLocalInput(f.from),
    to: toLocalInput(f.to),
  });
  return (
    <Card aria-label="Filters">
      <ApiForm
        form={form}
        label="Filter the audit log"
        className="sm:grid-cols-[repeat(auto-fill,minmax(11rem,1fr))]"
        onSubmit={({ actor, ...values }) => {
          const [actorType, actorId] = actor ? actor.split(":") : [];
          props.onApply({ ...values, actorType: actorType || undefined, actorId: actorId || undefined });
        }}
      >
        <TextField
          name="action"
          label="Action"
          placeholder="member. or apiKey.revoke"
          list="audit-actions"
          maxLength={100}
        />
        <datalist id="audit-actions">
          {KNOWN_ACTIONS.map((a) => (
            <option key={a} value={a} />
          ))}
        </datalist>
        <SelectField name="actor" label="Who" options={[{ value: "", label: "anyone" }, ...props.actors]} />
        <SelectField
          name="targetType"
          label="Target"
          accessibleName="Target type"
          options={[{ value: "", label: "any" }, ...TARGET_TYPES.map((t) => ({ value: t, label: t }))]}
        />
        <TextField name="targetId" label="Target id" placeholder="id" maxLength={100} />
        <TextField name="from" label="From" accessibleName="Earliest time" type="datetime-local" />
        <TextField name="to" label="To" accessibleName="Latest time" type="datetime-local" />
        <FormFooter label="Apply filters" pendingLabel="Applying…">
          <Button
            type="button"
            variant="outline"
            onClick={() => {
              form.reset(empty);
              props.onApply({});
            }}
          >
            Clear
          </Button>
        </FormFooter>
      </ApiForm>
    </Card>
  );
}
