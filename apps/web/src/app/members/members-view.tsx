"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { ROLES, roleAtLeast } from "@edgefleet/api/roles";
import { inviteMemberInput } from "@edgefleet/api/schemas";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { useActionFeedback } from "~/components/action-feedback";
import { ConfirmAction } from "~/components/confirm-action";
import { CopyOnce } from "~/components/copy-once";
import { actionsColumn, stateColumn } from "~/components/data-table/columns";
import { type DataColumn, DataTable } from "~/components/data-table/data-table";
import { ApiForm } from "~/components/forms/api-form";
import { SelectField, TextField } from "~/components/forms/fields";
import { FormFooter } from "~/components/forms/form-footer";
import { showServerError, useApiForm } from "~/components/forms/use-api-form";
import { QueryContent } from "~/components/query-content";
import { type Role, RoleSelect, roleOptions } from "~/components/role-select";
import { useFocusTarget } from "~/components/shell/focus-target";
import { Alert } from "~/components/ui/alert";
import { Button } from "~/components/ui/button";
import { CardDescription, Section } from "~/components/ui/card";
import { toast } from "~/components/ui/sonner";
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
  const members = useQuery(trpc.member.list.queryOptions());
  return (
    <QueryContent query={members} loading="Loading members" skeletonClassName="h-48">
      {(list) => <Members list={list} />}
    </QueryContent>
  );
}

function Members({ list }: { list: RouterOutputs["member"]["list"] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries(trpc.member.list.queryFilter());
  const feedback = useActionFeedback();
  const updateRole = useMutation(
    trpc.member.updateRole.mutationOptions(
      feedback(trpc.member.list.queryFilter(), (member) => `${member.email} is now ${member.role}`),
    ),
  );
  const remove = useMutation(
    trpc.member.remove.mutationOptions(
      feedback(trpc.member.list.queryFilter(), (member) => `${member.email} removed`),
    ),
  );

  const me = list.caller;
  const inviteDisabled = roleAtLeast(me.role, "admin") ? null : `needs the admin role; you are ${me.role}`;
  const columns: DataColumn<Member>[] = [
    { id: "email", accessorKey: "email", meta: { title: "E-mail", className: "break-all" } },
    { id: "name", accessorFn: (m) => m.name ?? "—", meta: { title: "Name" } },
    {
      id: "role",
      accessorFn: (m) => ROLES.indexOf(m.role),
      meta: { title: "Role" },
      cell: ({ row }) => {
        const reason = whyNotManage(me.role, row.original);
        return (
          <RoleSelect
            label={`Role of ${row.original.email}`}
            value={row.original.role}
            disabledReason={reason}
            disabled={updateRole.isPending}
            onChange={(role) => updateRole.mutate({ userId: row.original.userId, role })}
            allowed={(role) => grantableRoles(me.role).includes(role)}
          />
        );
      },
    },
    stateColumn(
      (m) => (m.pending ? { label: "invited", variant: "pending" } : { label: "active", variant: "online" }),
      undefined,
      "Status",
    ),
    {
      id: "joined",
      accessorFn: (m) => m.joinedAt,
      sortingFn: "datetime",
      meta: { title: "Joined" },
      cell: ({ row }) => row.original.joinedAt.toLocaleDateString(),
    },
    actionsColumn((member) => (
      <ConfirmAction
        label="Remove"
        question={`Remove ${member.email}?`}
        consequence="They lose access to this organization at their next request."
        disabledReason={whyNotManage(me.role, member)}
        pending={remove.isPending}
        onConfirm={() => remove.mutate({ userId: member.userId })}
      />
    )),
  ];

  return (
    <>
      <p className="text-sm text-muted-foreground" data-testid="my-role">
        Your role here: <strong className="text-foreground">{me.role}</strong>. Owners and admins invite,
        change roles and remove; only an owner grants or changes the owner role.
      </p>
      <InviteForm grantable={grantableRoles(me.role)} disabledReason={inviteDisabled} onInvited={refresh} />
      <Section title="Members">
        <DataTable
          label="Members"
          columnChooser
          columns={columns}
          data={list.items}
          getRowId={(m) => m.userId}
          rowTestId="member-row"
          rowData={(m) => ({ email: m.email })}
        />
        {roleAtLeast(me.role, "admin") ? null : (
          <p className="text-sm text-muted-foreground" data-testid="disabled-reason">
            Changing members needs the admin role; you are {me.role}.
          </p>
        )}
      </Section>
    </>
  );
}

function InviteForm(props: { grantable: Role[]; disabledReason: string | null; onInvited: () => unknown }) {
  const trpc = useTRPC();
  const ref = useRef<HTMLElement>(null);
  useFocusTarget("invite", ref);
  const [handover, setHandover] = useState<RouterOutputs["member"]["invite"] | null>(null);
  const form = useApiForm(inviteMemberInput, { email: "", role: "viewer" });
  const invite = useMutation(
    trpc.member.invite.mutationOptions({
      onSuccess: (member) => {
        form.reset({ email: "", role: form.getValues("role") });
        setHandover(member);
        toast.success(`${member.email} invited as ${member.role}`);
        return props.onInvited();
      },
      onError: (error) => showServerError(form, error, { CONFLICT: "email" }),
    }),
  );
  return (
    <Section ref={ref} id="invite" title="Invite a member">
      <ApiForm form={form} label="Invite a member" mutation={invite}>
        <TextField
          name="email"
          label="E-mail"
          accessibleName="E-mail to invite"
          type="email"
          placeholder="name@example.com"
          maxLength={254}
        />
        <SelectField
          name="role"
          label="Role"
          accessibleName="Role to grant"
          options={roleOptions((r) => props.grantable.includes(r))}
        />
        <FormFooter label="Invite" pendingLabel="Inviting…" disabledReason={props.disabledReason} />
      </ApiForm>
      {handover ? <InviteHandover member={handover} onDismiss={() => setHandover(null)} /> : null}
    </Section>
  );
}

function InviteHandover(props: { member: RouterOutputs["member"]["invite"]; onDismiss: () => void }) {
  const signInUrl =
    typeof window === "undefined" ? "/" : new URL("/fleet", window.location.origin).toString();
  const { member } = props;
  const password = member.handover?.temporaryPassword ?? null;
  return (
    <section aria-label="Invitation" className="grid gap-3 text-sm">
      <Alert>
        <p>
          {member.email} is invited as {member.role}. There is no e-mail service: hand them the sign-in link{" "}
          <a href={signInUrl} className="text-primary underline">
            {signInUrl}
          </a>
          {password ? " and the one-time password below" : ""}.
        </p>
        <CardDescription className="mt-1">
          {!member.handover
            ? "This server has no identity directory configured: add them to the organization in Keycloak too."
            : member.handover.accountCreated
              ? "A Keycloak account was made for them: they sign in with their e-mail address and this password, then choose their own."
              : "They already have an account and sign in as usual."}
        </CardDescription>
      </Alert>
      {password ? (
        <CopyOnce label="One-time password" secret={password} onDismiss={props.onDismiss} />
      ) : (
        <Button type="button" className="justify-self-start" onClick={props.onDismiss}>
          Done
        </Button>
      )}
    </section>
  );
}
