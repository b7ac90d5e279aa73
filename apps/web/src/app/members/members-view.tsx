"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { ROLES, roleAtLeast } from "@edgefleet/api/roles";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import styles from "~/components/admin-table.module.css";
import { ConfirmButton } from "~/components/confirm-button";
import { CopyOnce } from "~/components/copy-once";
import { type Role, RoleSelect } from "~/components/role-select";
import { SubmitRow } from "~/components/submit-row";
import { useTRPC } from "~/trpc/react";

type Member = RouterOutputs["member"]["list"]["items"][number];

/** Why `me` may not change or remove `member`, or null when they may (the server decides in the end). */
function whyNotManage(me: Role, member: Member): string | null {
  if (!roleAtLeast(me, "admin")) return `needs the admin role; you are ${me}`;
  if (member.role === "owner" && me !== "owner") return "only an owner can change an owner";
  return null;
}

/** Roles `me` may hand out: never more than their own, and owner only by an owner. */
function grantableRoles(me: Role): Role[] {
  return ROLES.filter((role) => roleAtLeast(me, role) && (role !== "owner" || me === "owner"));
}

export function MembersView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const members = useQuery(trpc.member.list.queryOptions());
  const [problem, setProblem] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries(trpc.member.list.queryFilter());
  const onError = (error: { message: string }) => {
    setNotice(null);
    setProblem(error.message);
  };
  const updateRole = useMutation(
    trpc.member.updateRole.mutationOptions({
      onSuccess: (member) => {
        setProblem(null);
        setNotice(`${member.email} is now ${member.role}`);
        return refresh();
      },
      onError,
    }),
  );
  const remove = useMutation(
    trpc.member.remove.mutationOptions({
      onSuccess: (member) => {
        setProblem(null);
        setNotice(`${member.email} removed`);
        return refresh();
      },
      onError,
    }),
  );

  if (members.isPending) return <p className={styles.note}>Loading members…</p>;
  if (members.error) {
    return (
      <p role="alert" className={styles.error}>
        {members.error.message}
      </p>
    );
  }
  const me = members.data.caller;
  const inviteDisabled = roleAtLeast(me.role, "admin") ? null : `needs the admin role; you are ${me.role}`;

  return (
    <>
      <p className={styles.note} data-testid="my-role">
        Your role here: <strong>{me.role}</strong>. Owners and admins invite, change roles and remove; only an
        owner grants or changes the owner role.
      </p>
      <InviteForm
        grantable={grantableRoles(me.role)}
        disabledReason={inviteDisabled}
        onInvited={(message) => {
          setProblem(null);
          setNotice(message);
          return refresh();
        }}
        onError={onError}
      />
      {problem ? (
        <p role="alert" className={styles.error}>
          {problem}
        </p>
      ) : null}
      {notice ? <p role="status">{notice}</p> : null}
      <table className={styles.table}>
        <thead>
          <tr>
            <th>E-mail</th>
            <th>Name</th>
            <th>Role</th>
            <th>Status</th>
            <th>Joined</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {members.data.items.map((member) => {
            const reason = whyNotManage(me.role, member);
            return (
              <tr key={member.userId} data-testid="member-row" data-email={member.email}>
                <td data-label="E-mail">{member.email}</td>
                <td data-label="Name">{member.name ?? "—"}</td>
                <td data-label="Role">
                  <RoleSelect
                    label={`Role of ${member.email}`}
                    value={member.role}
                    title={reason ?? undefined}
                    disabled={Boolean(reason) || updateRole.isPending}
                    onChange={(role) => updateRole.mutate({ userId: member.userId, role })}
                    allowed={(role) => grantableRoles(me.role).includes(role)}
                  />
                </td>
                <td data-label="Status">
                  {member.pending ? (
                    <span className={`${styles.badge} ${styles.pending}`} title="has not signed in yet">
                      invited
                    </span>
                  ) : (
                    <span className={styles.badge}>active</span>
                  )}
                </td>
                <td data-label="Joined">{member.joinedAt.toLocaleDateString()}</td>
                <td data-label="Actions">
                  <ConfirmButton
                    label="Remove"
                    question={`Remove ${member.email}?`}
                    disabledReason={reason}
                    pending={remove.isPending}
                    onConfirm={() => remove.mutate({ userId: member.userId })}
                  />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {reasonFooter(me.role)}
    </>
  );
}

function reasonFooter(me: Role) {
  if (roleAtLeast(me, "admin")) return null;
  return (
    <p className={styles.note} data-testid="disabled-reason">
      Changing members needs the admin role; you are {me}.
    </p>
  );
}

function InviteForm(props: {
  grantable: Role[];
  disabledReason: string | null;
  onInvited: (message: string) => unknown;
  onError: (error: { message: string }) => void;
}) {
  const trpc = useTRPC();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const [handover, setHandover] = useState<RouterOutputs["member"]["invite"] | null>(null);
  const invite = useMutation(
    trpc.member.invite.mutationOptions({
      onSuccess: (member) => {
        setEmail("");
        setHandover(member);
        return props.onInvited(`${member.email} invited as ${member.role}`);
      },
      onError: props.onError,
    }),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate({ email, role });
  };
  return (
    <>
      <form className={styles.form} aria-label="Invite a member" onSubmit={submit}>
        <label className={styles.grow}>
          <span>E-mail</span>
          <input
            type="email"
            required
            aria-label="E-mail to invite"
            placeholder="name@example.com"
            value={email}
            maxLength={254}
            onChange={(event) => setEmail(event.target.value)}
          />
        </label>
        <label>
          <span>Role</span>
          <RoleSelect
            label="Role to grant"
            value={role}
            onChange={setRole}
            allowed={(r) => props.grantable.includes(r)}
          />
        </label>
        <SubmitRow
          label="Invite"
          pendingLabel="Inviting…"
          pending={invite.isPending}
          disabledReason={props.disabledReason}
        />
      </form>
      {handover ? <InviteHandover member={handover} onDismiss={() => setHandover(null)} /> : null}
    </>
  );
}

function InviteHandover(props: { member: RouterOutputs["member"]["invite"]; onDismiss: () => void }) {
  const signInUrl =
    typeof window === "undefined" ? "/" : new URL("/fleet", window.location.origin).toString();
  const { member } = props;
  const password = member.handover?.temporaryPassword ?? null;
  return (
    <section className={styles.form} aria-label="Invitation">
      <div>
        <p>
          {member.email} is invited as {member.role}. There is no e-mail service: hand them the sign-in link{" "}
          <a href={signInUrl}>{signInUrl}</a>
          {password ? " and the one-time password below" : ""}.
        </p>
        {!member.handover ? (
          <p className={styles.note}>
            This server has no identity directory configured: add them to the organization in Keycloak too.
          </p>
        ) : member.handover.accountCreated ? (
          <p className={styles.note}>
            A Keycloak account was made for them: they sign in with their e-mail address and this password,
            then choose their own.
          </p>
        ) : (
          <p className={styles.note}>They already have an account and sign in as usual.</p>
        )}
      </div>
      {password ? (
        <CopyOnce label="One-time password" secret={password} onDismiss={props.onDismiss} />
      ) : (
        <button type="button" onClick={props.onDismiss}>
          Done
        </button>
      )}
    </section>
  );
}
