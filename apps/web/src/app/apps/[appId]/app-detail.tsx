"use client";

import { updateAppInput } from "@edgefleet/api/schemas";
import { useQuery } from "@tanstack/react-query";
import { DetailCard, DetailCards } from "~/components/detail-card";
import { EditNameForm } from "~/components/forms/edit-name-form";
import { type Role, roleDenial } from "~/components/role-reason";
import { useTRPC } from "~/trpc/react";
import { RolloutsTable } from "../../rollouts/rollouts-table";
import { InstanceCounts } from "../instance-counts";
import { AddVersion } from "./add-version";
import { VersionsTable } from "./versions-table";

export function AppDetail(props: { id: string; role: Role }) {
  const trpc = useTRPC();
  const app = useQuery(
    trpc.app.byId.queryOptions({ id: props.id }, { refetchInterval: 5_000, retry: false }),
  );
  const denied = roleDenial(props.role, "operator");
  return (
    <DetailCards query={app} loading="Loading the app">
      {(data) => (
        <>
          <DetailCard
            id="app-title"
            title={data.name}
            facts={[
              { term: "Description", value: data.description ?? "—" },
              {
                term: "Nodes",
                value: (
                  <InstanceCounts total={data.instances} byState={data.byState} testId="app-instances" />
                ),
              },
              { term: "Id", value: data.id, className: "font-mono break-all" },
            ]}
          />
          <VersionsTable appId={data.id} role={props.role} className="lg:col-span-2" />
          <AddVersion appId={data.id} disabledReason={denied} />
          <EditNameForm
            noun="app"
            record={data}
            schema={updateAppInput}
            save={trpc.app.update.mutationOptions()}
            remove={trpc.app.delete.mutationOptions()}
            nameDescription={data.instances > 0 ? "Cannot change while nodes have the app." : undefined}
            deleteConsequence={
              data.instances > 0
                ? `${data.name} is on ${data.instances} nodes; the server refuses until a rollout removes it from them.`
                : "The app and all its versions are deleted."
            }
            disabledReason={denied}
          />
          <RolloutsTable appId={data.id} className="lg:col-span-2" />
        </>
      )}
    </DetailCards>
  );
}
