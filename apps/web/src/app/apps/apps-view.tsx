"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { createAppInput } from "@edgefleet/api/schemas";
import { useMutation, useQuery } from "@tanstack/react-query";
import { BoxIcon } from "lucide-react";
import { useMemo } from "react";
import { useActionFeedback } from "~/components/action-feedback";
import { ConfirmAction } from "~/components/confirm-action";
import { actionsColumn, linkColumn, textColumn } from "~/components/data-table/columns";
import type { DataColumn } from "~/components/data-table/data-table";
import { QueryTable } from "~/components/data-table/query-table";
import { CreateNameForm } from "~/components/forms/create-name-form";
import { type Role, roleDenial } from "~/components/role-reason";
import { Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { useTRPC } from "~/trpc/react";
import { InstanceCounts } from "./instance-counts";

type AppRow = RouterOutputs["app"]["list"][number];

/** Instance counts move as agents report: poll. */
const REFRESH_MS = 5_000;

const baseColumns: DataColumn<AppRow>[] = [
  linkColumn("name", "App", (app) => ({ text: app.name, href: `/apps/${app.id}` }), {
    className: "font-mono font-medium",
    testId: "app-name",
  }),
  textColumn("description", "Description", (app) => app.description),
  {
    id: "versions",
    accessorFn: (app) => app.versions,
    meta: { title: "Versions", className: "tabular-nums" },
  },
  {
    id: "instances",
    accessorFn: (app) => app.instances,
    meta: { title: "Nodes", className: "tabular-nums" },
    cell: ({ row }) => <InstanceCounts total={row.original.instances} byState={row.original.byState} />,
  },
];

const noApps = (
  <EmptyState icon={<BoxIcon />} title="No apps yet">
    An app is a program your nodes run, known to them by its name. Create one above, add a version (its run
    command and an artifact: a tarball or a binary), then roll the version out to your nodes batch by batch.
  </EmptyState>
);

export function AppsView(props: { role: Role }) {
  const trpc = useTRPC();
  const apps = useQuery(trpc.app.list.queryOptions(undefined, { refetchInterval: REFRESH_MS }));
  const denied = roleDenial(props.role, "operator");
  const feedback = useActionFeedback();
  const remove = useMutation(
    trpc.app.delete.mutationOptions(feedback(trpc.app.list.queryFilter(), (app) => `Deleted ${app.name}`)),
  );
  const columns = useMemo(
    () => [
      ...baseColumns,
      actionsColumn<AppRow>((app) => (
        <ConfirmAction
          label="Delete"
          question={`Delete ${app.name}?`}
          consequence={
            app.instances > 0
              ? `${app.name} is on ${app.instances} nodes; the server refuses until a rollout removes it from them.`
              : `${app.name} and its ${app.versions} version${app.versions === 1 ? "" : "s"} are deleted.`
          }
          confirmLabel="Yes, delete"
          disabledReason={denied}
          pending={remove.isPending}
          onConfirm={() => remove.mutate({ id: app.id })}
        />
      )),
    ],
    [denied, remove.isPending, remove.mutate],
  );
  return (
    <>
      <CreateNameForm
        noun="app"
        description="Agents know an app by its name (its folder on the node), so the name cannot change while nodes have it."
        schema={createAppInput}
        create={trpc.app.create.mutationOptions()}
        placeholders={{ name: "telemetry-collector", description: "Ships sensor readings upstream" }}
        disabledReason={denied}
      />
      <Section title="Apps">
        <QueryTable query={apps} label="Apps" columns={columns} rowTestId="app-row" empty={noApps} />
      </Section>
    </>
  );
}
