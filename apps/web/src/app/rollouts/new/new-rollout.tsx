"use client";

import type { AppRouter } from "@edgefleet/api";
import { useMutation, useQuery } from "@tanstack/react-query";
import type { TRPCClientErrorLike } from "@trpc/client";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { type FieldPath, useForm, useWatch } from "react-hook-form";
import { ApiForm } from "~/components/forms/api-form";
import { FormFooter } from "~/components/forms/form-footer";
import { type Role, roleDenial } from "~/components/role-reason";
import { Section } from "~/components/ui/card";
import { Label } from "~/components/ui/label";
import { NativeSelect } from "~/components/ui/native-select";
import { toast } from "~/components/ui/sonner";
import { useTRPC } from "~/trpc/react";
import { BatchesEditor } from "./batches-editor";
import { CheckboxGroupField, SelectField, TextField } from "./fields";
import { PolicyFields } from "./policy-fields";
import {
  fieldOf,
  type PlanInput,
  planInputOf,
  type RolloutFormValues,
  rolloutFormDefaults,
  rolloutFormResolver,
} from "./rollout-form";
import { RolloutPreview } from "./rollout-preview";
import { WindowsEditor } from "./windows-editor";

type ApiError = TRPCClientErrorLike<AppRouter>;

/**
 * The new-rollout page: version, target and strategy in one form judged by the API's schema as
 * it is typed; "Preview" runs the planner on the server (rollout.preview, the controller's own
 * code) and shows the batches; "Start rollout" creates it and starts it, then opens its live page.
 */
export function NewRollout(props: { role: Role; appId?: string; versionId?: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const denied = roleDenial(props.role, "operator");
  const [appId, setAppId] = useState(props.appId ?? "");
  const apps = useQuery(trpc.app.list.queryOptions());
  const versions = useQuery(
    trpc.appVersion.list.queryOptions({ appId, limit: 200 }, { enabled: appId !== "" }),
  );
  const sites = useQuery(trpc.site.list.queryOptions());
  const siteOptions = (sites.data ?? [])
    .filter((s): s is typeof s & { id: string; name: string } => s.id !== null && s.name !== null)
    .map((s) => ({ value: s.id, label: s.name }));

  const form = useForm<RolloutFormValues, unknown, PlanInput>({
    resolver: rolloutFormResolver,
    defaultValues: rolloutFormDefaults(props.versionId ?? ""),
    mode: "onTouched",
  });
  // The preview is of the values it was asked for: any change asks for a new one.
  const [planned, setPlanned] = useState<PlanInput | null>(null);
  useEffect(() => {
    const subscription = form.watch(() => setPlanned(null));
    return () => subscription.unsubscribe();
  }, [form]);
  const preview = useQuery(
    trpc.rollout.preview.queryOptions(planned as PlanInput, { enabled: planned !== null, retry: false }),
  );
  // A refusal naming a field of the strategy (a gate's PromQL that Mimir refused, …) goes on it.
  const previewError = preview.error;
  useEffect(() => {
    const named = previewError?.message.match(/^((?:strategy|target|appVersionId)[\w.-]*): ([\s\S]*)$/);
    if (!named?.[1] || !named[2]) return;
    const field = fieldOf(named[1].split("."), planInputOf(form.getValues()).fields);
    if (field)
      form.setError(
        field as FieldPath<RolloutFormValues>,
        { type: "server", message: named[2] },
        { shouldFocus: true },
      );
  }, [previewError, form]);

  const showRefusal = (error: ApiError) => {
    const fieldErrors = error.data?.zodError?.fieldErrors as Record<string, string[] | undefined> | undefined;
    const target = fieldErrors?.target?.[0];
    if (target) form.setError("target.selector", { type: "server", message: target }, { shouldFocus: true });
    else form.setError("root.server", { type: "server", message: error.message });
  };
  const start = useMutation(trpc.rollout.start.mutationOptions());
  const create = useMutation(
    trpc.rollout.create.mutationOptions({
      onSuccess: async (rollout) => {
        try {
          await start.mutateAsync({ id: rollout.id });
          toast.success(`Started ${rollout.appName} → ${rollout.version}`);
        } catch (error) {
          toast.error(`Created, but not started: ${(error as Error).message}`);
        }
        router.push(`/rollouts/${rollout.id}`);
      },
      onError: showRefusal,
    }),
  );

  const versionId = useWatch({ control: form.control, name: "appVersionId" });
  const readyVersions = (versions.data?.items ?? []).filter((v) => v.artifact.state === "ready");
  const version = versions.data?.items.find((v) => v.id === versionId);
  return (
    <ApiForm
      form={form}
      label="New rollout"
      className="sm:grid-cols-1"
      onSubmit={(input) => {
        if (planned && JSON.stringify(planned) === JSON.stringify(input) && preview.data)
          create.mutate(input);
        else setPlanned(input);
      }}
    >
      <Section title="Version and target">
        <div className="grid gap-4 sm:grid-cols-2">
          <div className="grid gap-1.5">
            <Label htmlFor="rollout-app">App</Label>
            <NativeSelect
              id="rollout-app"
              value={appId}
              onChange={(event) => {
                setAppId(event.target.value);
                form.setValue("appVersionId", "");
              }}
            >
              <option value="">Choose an app</option>
              {(apps.data ?? []).map((app) => (
                <option key={app.id} value={app.id}>
                  {app.name}
                </option>
              ))}
            </NativeSelect>
          </div>
          <SelectField
            name="appVersionId"
            label="Version"
            description={
              versions.data && readyVersions.length < versions.data.items.length
                ? "Only versions whose artifact is ready can be rolled out."
                : undefined
            }
            options={[
              { value: "", label: appId ? "Choose a version" : "Choose an app first" },
              ...readyVersions.map((v) => ({ value: v.id, label: v.version })),
            ]}
          />
          <TextField
            name="target.selector"
            label="Label selector"
            placeholder="tier=canary,region in (eu-west)"
            description="Empty: every node (of the sites below, if any). Nodes that match later get the version too."
          />
          <CheckboxGroupField
            name="target.siteIds"
            legend="Only these sites (none: every site)"
            options={siteOptions}
          />
        </div>
      </Section>
      <BatchesEditor />
      <Section
        title="Defaults and safety"
        description="Every batch that sets nothing of its own, and the implicit last batch, use these."
      >
        <div className="grid gap-4 sm:grid-cols-[repeat(auto-fill,minmax(12rem,1fr))]">
          <PolicyFields prefix="defaults" caption="Default" />
          <TextField
            name="defaults.waitSeconds"
            label="Wait for offline nodes (s)"
            inputMode="numeric"
            description="With offline = wait."
          />
          <SelectField
            name="defaults.afterWait"
            label="Still offline after the wait"
            options={{ skip: "skip (update on return)", fail: "count as failed" }}
          />
          <SelectField
            name="onBatchFailure"
            label="When a batch misses its threshold"
            options={{ pause: "halt (a person decides)", rollback: "roll back automatically" }}
          />
          <SelectField
            name="budget.kind"
            label="Disruption budget per site"
            options={{ "": "none", count: "at most N nodes updating", percent: "at most N% updating" }}
          />
          <TextField name="budget.value" label="Budget N" inputMode="numeric" />
          <TextField
            name="siteBandwidth.megabytesPerSecond"
            label="Site uplink budget (MB/s)"
            accessibleName="Site uplink budget in MB per second"
            inputMode="decimal"
            placeholder="unlimited"
            description="Paces each site's cache seed and its nodes' downloads from the hub; measured at the hub."
          />
          <TextField
            name="siteBandwidth.concurrentDownloads"
            label="Downloads at once per site"
            accessibleName="Concurrent downloads per site"
            inputMode="numeric"
            placeholder="unlimited"
          />
        </div>
        <WindowsEditor siteOptions={siteOptions} />
      </Section>
      <Section
        title="Preview"
        description="The batches if the rollout started now, from the planner the controller uses."
      >
        {planned ? (
          <RolloutPreview query={preview} />
        ) : (
          <p className="text-sm text-muted-foreground">
            {version
              ? `Preview ${version.version}'s rollout to see its batches.`
              : "Choose a version, then preview."}
          </p>
        )}
        <FormFooter
          label={planned && preview.data ? "Start rollout" : "Preview"}
          pendingLabel={create.isPending || start.isPending ? "Starting…" : "Planning…"}
          pending={create.isPending || start.isPending || (planned !== null && preview.isFetching)}
          disabledReason={planned && preview.data ? denied : null}
        />
      </Section>
    </ApiForm>
  );
}
