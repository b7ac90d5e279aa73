"use client";

import { updateAppInput } from "@edgefleet/api/schemas";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { ConfirmAction } from "~/components/confirm-action";
import { ErrorNotice } from "~/components/error-notice";
import { ApiForm } from "~/components/forms/api-form";
import { TextField } from "~/components/forms/fields";
import { FormFooter } from "~/components/forms/form-footer";
import { showServerError, useApiForm } from "~/components/forms/use-api-form";
import { type Role, roleDenial } from "~/components/role-reason";
import { Card, CardHeader, Section } from "~/components/ui/card";
import { Skeleton } from "~/components/ui/skeleton";
import { toast } from "~/components/ui/sonner";
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
  if (app.error) return <ErrorNotice error={app.error} />;
  if (!app.data) return <Skeleton className="h-48" aria-label="Loading the app" />;
  const data = app.data;
  return (
    <div className="grid gap-6 lg:grid-cols-2">
      <Card aria-labelledby="app-title" className="lg:col-span-2">
        <CardHeader>
          <h2 id="app-title" className="mr-auto font-mono text-xl font-semibold" data-testid="app-title">
            {data.name}
          </h2>
        </CardHeader>
        <dl className="grid gap-x-6 gap-y-2 text-sm sm:grid-cols-[max-content_1fr]">
          <dt className="text-muted-foreground">Description</dt>
          <dd>{data.description ?? "—"}</dd>
          <dt className="text-muted-foreground">Nodes</dt>
          <dd>
            <InstanceCounts total={data.instances} byState={data.byState} testId="app-instances" />
          </dd>
          <dt className="text-muted-foreground">Id</dt>
          <dd className="font-mono break-all">{data.id}</dd>
        </dl>
      </Card>
      <VersionsTable appId={data.id} role={props.role} className="lg:col-span-2" />
      <AddVersion appId={data.id} disabledReason={denied} />
      <Section title="Edit">
        <EditApp
          id={data.id}
          name={data.name}
          description={data.description}
          instances={data.instances}
          disabledReason={denied}
        />
      </Section>
      <RolloutsTable appId={data.id} className="lg:col-span-2" />
    </div>
  );
}

function EditApp(props: {
  id: string;
  name: string;
  description: string | null;
  instances: number;
  disabledReason: string | null;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const form = useApiForm(updateAppInput, {
    id: props.id,
    name: props.name,
    description: props.description ?? "",
  });
  const update = useMutation(
    trpc.app.update.mutationOptions({
      onSuccess: (app) => {
        toast.success(`Saved ${app.name}`);
        form.reset({ id: app.id, name: app.name, description: app.description ?? "" });
        return queryClient.invalidateQueries();
      },
      onError: (error) => showServerError(form, error, { CONFLICT: "name" }),
    }),
  );
  const remove = useMutation(
    trpc.app.delete.mutationOptions({
      onSuccess: async (app) => {
        toast.success(`Deleted ${app.name}`);
        await queryClient.invalidateQueries(trpc.app.list.queryFilter());
        router.push("/apps");
      },
      onError: (error) => form.setError("root.server", { type: "server", message: error.message }),
    }),
  );
  return (
    <ApiForm
      form={form}
      label="Edit the app"
      className="sm:grid-cols-1"
      onSubmit={({ name, description }) =>
        update.mutate({ id: props.id, name, description: description ? description : null })
      }
    >
      <TextField
        name="name"
        label="Name"
        accessibleName="New app name"
        description={props.instances > 0 ? "Cannot change while nodes have the app." : undefined}
      />
      <TextField name="description" label="Description" accessibleName="New app description" />
      <FormFooter
        label="Save"
        pendingLabel="Saving…"
        pending={update.isPending}
        disabledReason={props.disabledReason}
      >
        <ConfirmAction
          label="Delete app"
          variant="destructive"
          size="default"
          question={`Delete ${props.name}?`}
          consequence={
            props.instances > 0
              ? `${props.name} is on ${props.instances} nodes; the server refuses until a rollout removes it from them.`
              : "The app and all its versions are deleted."
          }
          confirmLabel="Yes, delete"
          disabledReason={props.disabledReason}
          pending={remove.isPending}
          onConfirm={() => remove.mutate({ id: props.id })}
        />
      </FormFooter>
    </ApiForm>
  );
}
