"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { type ROLES, roleAtLeast } from "@edgefleet/api/roles";
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { type FormEvent, useState } from "react";
import table from "~/components/admin-table.module.css";
import { ConfirmButton } from "~/components/confirm-button";
import { CopyOnce } from "~/components/copy-once";
import { parseLabelAssignments } from "~/components/label-input";
import { SubmitRow } from "~/components/submit-row";
import { timeAgo } from "~/components/time-ago";
import { useTRPC } from "~/trpc/react";
import styles from "./enrollment.module.css";
import { InstallCommand } from "./install-command";

type Role = (typeof ROLES)[number];
type Token = RouterOutputs["enrollment"]["listTokens"]["items"][number];

/** Pending nodes and token uses change while an operator watches: poll both. */
const REFRESH_MS = 5_000;
const TOKEN_PAGE = 50;

const EXPIRY_CHOICES = [
  { hours: 1, label: "1 hour" },
  { hours: 24, label: "1 day" },
  { hours: 24 * 7, label: "7 days" },
  { hours: 24 * 30, label: "30 days" },
  { hours: 24 * 365, label: "1 year" },
];

/**
 * Enrollment: make tokens (shown once, with the install command), see and revoke them, approve
 * or reject nodes waiting for approval. The role shown is the session's; the API decides.
 */
export function EnrollmentView(props: { role: Role; initialSiteId: string }) {
  const denied = roleAtLeast(props.role, "operator")
    ? null
    : `needs the operator role; you are ${props.role}`;
  return (
    <>
      <p className={table.note}>
        A node enrolls once with a token: the agent trades it for its own credentials. Tokens expire, can be
        limited to a number of nodes, and can require an operator&apos;s approval for each node.
      </p>
      <CreateTokenForm disabledReason={denied} initialSiteId={props.initialSiteId} />
      <PendingNodes disabledReason={denied} />
      <TokenList disabledReason={denied} />
    </>
  );
}

function CreateTokenForm(props: { disabledReason: string | null; initialSiteId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const sites = useQuery(trpc.site.list.queryOptions());
  const [description, setDescription] = useState("");
  const [siteId, setSiteId] = useState(props.initialSiteId);
  const [expiresInHours, setExpiresInHours] = useState(24);
  const [maxUses, setMaxUses] = useState("");
  const [labels, setLabels] = useState("");
  const [requiresApproval, setRequiresApproval] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [created, setCreated] = useState<RouterOutputs["enrollment"]["createToken"] | null>(null);
  const create = useMutation(
    trpc.enrollment.createToken.mutationOptions({
      onSuccess: (token) => {
        setProblem(null);
        setCreated(token);
        setDescription("");
        setMaxUses("");
        setLabels("");
        return queryClient.invalidateQueries(trpc.enrollment.listTokens.pathFilter());
      },
      onError: (error) => setProblem(error.message),
    }),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    let parsedLabels: Record<string, string>;
    try {
      parsedLabels = parseLabelAssignments(labels);
    } catch (error) {
      setProblem(`Labels: ${(error as Error).message}`);
      return;
    }
    create.mutate({
      expiresInHours,
      labels: parsedLabels,
      requiresApproval,
      ...(description.trim() ? { description: description.trim() } : {}),
      ...(siteId ? { siteId } : {}),
      ...(maxUses ? { maxUses: Number(maxUses) } : {}),
    });
  };
  return (
    <section className={styles.section} aria-labelledby="new-token">
      <h2 id="new-token">New enrollment token</h2>
      <form className={table.form} aria-label="Create an enrollment token" onSubmit={submit}>
        <label className={table.grow}>
          <span>Description</span>
          <input
            aria-label="Token description"
            maxLength={200}
            placeholder="plant 7, line 2"
            value={description}
            onChange={(event) => setDescription(event.target.value)}
          />
        </label>
        <label>
          <span>Site</span>
          <select aria-label="Site" value={siteId} onChange={(event) => setSiteId(event.target.value)}>
            <option value="">no site</option>
            {(sites.data ?? [])
              .filter((site) => site.id !== null)
              .map((site) => (
                <option key={site.id} value={site.id ?? ""}>
                  {site.name}
                </option>
              ))}
          </select>
        </label>
        <label>
          <span>Expires after</span>
          <select
            aria-label="Expires after"
            value={expiresInHours}
            onChange={(event) => setExpiresInHours(Number(event.target.value))}
          >
            {EXPIRY_CHOICES.map((choice) => (
              <option key={choice.hours} value={choice.hours}>
                {choice.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Max nodes</span>
          <input
            aria-label="Max uses"
            className={styles.narrow}
            type="number"
            min={1}
            placeholder="unlimited"
            value={maxUses}
            onChange={(event) => setMaxUses(event.target.value)}
          />
        </label>
        <label className={table.grow}>
          <span>Labels for its nodes</span>
          <input
            aria-label="Token labels"
            placeholder="tier=edge, hw=ipc"
            value={labels}
            onChange={(event) => setLabels(event.target.value)}
          />
        </label>
        <div className={styles.checkbox}>
          <input
            id="requires-approval"
            type="checkbox"
            checked={requiresApproval}
            onChange={(event) => setRequiresApproval(event.target.checked)}
          />
          <label htmlFor="requires-approval">Approve each node</label>
        </div>
        <SubmitRow
          label="Create token"
          pendingLabel="Creating…"
          pending={create.isPending}
          disabledReason={props.disabledReason}
          problem={problem}
        />
      </form>
      {created ? (
        <>
          <CopyOnce label="Enrollment token" secret={created.token} onDismiss={() => setCreated(null)} />
          <InstallCommand command={created.installCommand} />
        </>
      ) : null}
    </section>
  );
}

function PendingNodes(props: { disabledReason: string | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const pending = useQuery(
    trpc.node.list.queryOptions({ status: "pending", limit: 100 }, { refetchInterval: REFRESH_MS }),
  );
  const [problem, setProblem] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const settled = (message: string) => {
    setProblem(null);
    setNotice(message);
    return queryClient.invalidateQueries(trpc.node.list.queryFilter());
  };
  const approve = useMutation(
    trpc.enrollment.approveNode.mutationOptions({
      onSuccess: (node) => settled(`${node.name} approved: it receives its credentials on its next try`),
      onError: (error) => setProblem(error.message),
    }),
  );
  const reject = useMutation(
    trpc.enrollment.revokeNode.mutationOptions({
      onSuccess: (node) => settled(`${node.name} rejected`),
      onError: (error) => setProblem(error.message),
    }),
  );
  const nodes = pending.data?.items ?? [];
  return (
    <section className={styles.section} aria-labelledby="pending-nodes">
      <h2 id="pending-nodes">Waiting for approval</h2>
      {problem ? (
        <p role="alert" className={table.error}>
          {problem}
        </p>
      ) : null}
      {notice ? <p role="status">{notice}</p> : null}
      {pending.error ? (
        <p role="alert" className={table.error}>
          {pending.error.message}
        </p>
      ) : pending.isPending ? (
        <p className={table.note}>Loading…</p>
      ) : nodes.length === 0 ? (
        <p className={table.note}>No node is waiting.</p>
      ) : (
        <table className={table.table} data-testid="pending-nodes">
          <thead>
            <tr>
              <th>Node</th>
              <th>Site</th>
              <th>Labels</th>
              <th>Agent</th>
              <th>Actions</th>
            </tr>
          </thead>
          <tbody>
            {nodes.map((node) => (
              <tr key={node.id} data-testid="pending-node" data-name={node.name}>
                <td data-label="Node">
                  <Link href={`/nodes/${node.id}`}>{node.name}</Link>
                </td>
                <td data-label="Site">{node.site ?? "—"}</td>
                <td data-label="Labels">
                  <Labels labels={node.labels} />
                </td>
                <td data-label="Agent" className="mono">
                  {node.agentVersion ?? "—"}
                </td>
                <td data-label="Actions">
                  <span className={table.actions}>
                    <button
                      type="button"
                      disabled={approve.isPending || Boolean(props.disabledReason)}
                      title={props.disabledReason ?? undefined}
                      onClick={() => approve.mutate({ nodeId: node.id })}
                    >
                      Approve
                    </button>
                    <ConfirmButton
                      label="Reject"
                      question={`Reject ${node.name}? Its key can never enroll again.`}
                      disabledReason={props.disabledReason}
                      pending={reject.isPending}
                      onConfirm={() => reject.mutate({ nodeId: node.id })}
                    />
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function tokenState(token: Token): { label: string; className: string } {
  if (token.revokedAt) return { label: "revoked", className: table.revoked ?? "" };
  if (token.expiresAt <= new Date()) return { label: "expired", className: table.revoked ?? "" };
  if (token.maxUses !== null && token.uses >= token.maxUses) return { label: "used up", className: "" };
  return { label: "usable", className: "" };
}

function TokenList(props: { disabledReason: string | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const tokens = useInfiniteQuery(
    trpc.enrollment.listTokens.infiniteQueryOptions(
      { limit: TOKEN_PAGE },
      { getNextPageParam: (page) => page.nextCursor, refetchInterval: REFRESH_MS, retry: false },
    ),
  );
  const items = tokens.data?.pages.flatMap((page) => page.items) ?? [];
  const [problem, setProblem] = useState<string | null>(null);
  const revoke = useMutation(
    trpc.enrollment.revokeToken.mutationOptions({
      onSuccess: () => {
        setProblem(null);
        return queryClient.invalidateQueries(trpc.enrollment.listTokens.pathFilter());
      },
      onError: (error) => setProblem(error.message),
    }),
  );
  return (
    <section className={styles.section} aria-labelledby="tokens">
      <h2 id="tokens">Tokens</h2>
      {problem ? (
        <p role="alert" className={table.error}>
          {problem}
        </p>
      ) : null}
      {tokens.error ? (
        <p role="alert" className={table.error}>
          {tokens.error.message}
        </p>
      ) : tokens.isPending ? (
        <p className={table.note}>Loading tokens…</p>
      ) : items.length === 0 ? (
        <p className={table.note}>No tokens yet.</p>
      ) : (
        <table className={table.table} data-testid="tokens">
          <thead>
            <tr>
              <th>Description</th>
              <th>Site</th>
              <th>Nodes</th>
              <th>Expires</th>
              <th>Labels</th>
              <th>State</th>
              <th>Actions</th>
            </tr>
          </thead>
          <tbody>
            {items.map((token) => {
              const state = tokenState(token);
              return (
                <tr key={token.id} data-testid="token-row" data-id={token.id}>
                  <td data-label="Description">
                    {token.description ?? <span className={table.note}>no description</span>}
                    {token.requiresApproval ? <span className={table.note}> · approval</span> : null}
                  </td>
                  <td data-label="Site">{token.site?.name ?? "—"}</td>
                  <td data-label="Nodes" data-testid="token-uses">
                    {token.uses} / {token.maxUses ?? "∞"}
                  </td>
                  <td data-label="Expires" title={token.expiresAt.toISOString()}>
                    {timeAgo(token.expiresAt)}
                  </td>
                  <td data-label="Labels">
                    <Labels labels={token.labels} />
                  </td>
                  <td data-label="State">
                    <span
                      className={`${table.badge} ${styles.nowrap} ${state.className}`}
                      data-testid="token-state"
                    >
                      {state.label}
                    </span>
                  </td>
                  <td data-label="Actions">
                    {state.label === "revoked" || state.label === "expired" ? null : (
                      <ConfirmButton
                        label="Revoke"
                        question="Revoke this token? Nodes already enrolled keep working."
                        disabledReason={props.disabledReason}
                        pending={revoke.isPending}
                        onConfirm={() => revoke.mutate({ id: token.id })}
                      />
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {tokens.hasNextPage ? (
        <button
          type="button"
          disabled={tokens.isFetchingNextPage}
          onClick={() => void tokens.fetchNextPage()}
        >
          {tokens.isFetchingNextPage ? "Loading…" : "Load more"}
        </button>
      ) : null}
    </section>
  );
}

function Labels(props: { labels: Record<string, string> }) {
  const entries = Object.entries(props.labels);
  if (entries.length === 0) return <span className={table.note}>—</span>;
  return (
    <span className={styles.labels}>
      {entries.map(([key, value]) => (
        <span key={key} className={`${styles.label} mono`}>
          {key}={value}
        </span>
      ))}
    </span>
  );
}
