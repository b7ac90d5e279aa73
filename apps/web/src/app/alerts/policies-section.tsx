"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { BellIcon } from "lucide-react";
import { useMemo } from "react";
import { useWatch } from "react-hook-form";
import { useActionFeedback } from "~/components/action-feedback";
import { actionsColumn, stateColumn, textColumn } from "~/components/data-table/columns";
import type { DataColumn } from "~/components/data-table/data-table";
import { QueryTable } from "~/components/data-table/query-table";
import { ApiForm } from "~/components/forms/api-form";
import { NameField, SelectField, TextField } from "~/components/forms/fields";
import { FormFooter } from "~/components/forms/form-footer";
import { siteOptions } from "~/components/forms/select-options";
import { showServerError, useApiForm } from "~/components/forms/use-api-form";
import { type Role, roleDenial } from "~/components/role-reason";
import { Badge } from "~/components/ui/badge";
import { Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { toast } from "~/components/ui/sonner";
import { useTRPC } from "~/trpc/react";
import { POLICY_KINDS, type PolicyKind, policyForm } from "./policy-form";
import { severityVariant } from "./shared";
import { SwitchDeleteActions } from "./switch-delete-actions";

type Policy = RouterOutputs["alert"]["policies"][number];

const SEVERITIES = { critical: "critical", warning: "warning", info: "info" };
const PARAM_FIELDS = {
  forMinutes: { label: "For (minutes)", placeholder: "5" },
  thresholdPercent: { label: "Threshold (%)", placeholder: "90" },
  restarts: { label: "Restarts", placeholder: "3" },
  windowMinutes: { label: "Within (minutes)", placeholder: "10" },
  expr: { label: "PromQL", placeholder: "up == 0" },
} as const;

/** What a policy watches, in words. */
function describeSpec(spec: Policy["spec"]): string {
  const kind = POLICY_KINDS[spec.kind as PolicyKind]?.label ?? spec.kind;
  switch (spec.kind) {
    case "cpu_above":
    case "memory_above":
    case "disk_above":
      return `${kind} ${spec.thresholdPercent}% for ${spec.forMinutes} min`;
    case "node_offline":
    case "site_offline":
      return `${kind} for ${spec.forMinutes} min`;
    case "app_crash_looping":
      return `${spec.restarts} restarts within ${spec.windowMinutes} min`;
    case "promql":
      return `${spec.expr} for ${spec.forMinutes} min`;
    case "bandwidth_over_budget":
      return `over ${spec.budgetBytes} bytes per ${spec.window}`;
    default:
      return kind;
  }
}

/** Alert policies: what should wake someone. Operators create, switch off and on, and delete them. */
export function PoliciesSection(props: { role: Role }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const denied = roleDenial(props.role, "operator");
  const policies = useQuery(trpc.alert.policies.queryOptions());
  const status = useQuery(trpc.alert.status.queryOptions(undefined, { refetchInterval: 5_000 }));
  const sites = useQuery(trpc.site.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries(trpc.alert.pathFilter());
  const form = useApiForm(policyForm, {
    name: "",
    severity: "warning",
    kind: "node_offline",
    siteId: "",
    forMinutes: "5",
    thresholdPercent: "90",
    restarts: "3",
    windowMinutes: "10",
    expr: "",
  });
  const kind = useWatch({ control: form.control, name: "kind" }) as PolicyKind;
  const create = useMutation(
    trpc.alert.createPolicy.mutationOptions({
      onSuccess: (policy) => {
        toast.success(`Policy ${policy.name} created`);
        form.reset({ ...form.getValues(), name: "", expr: "" });
        return refresh();
      },
      onError: (error) => showServerError(form, error, { NOT_FOUND: ["siteId", /^site /] }),
    }),
  );
  const feedback = useActionFeedback();
  const update = useMutation(trpc.alert.updatePolicy.mutationOptions(feedback(trpc.alert.pathFilter())));
  const remove = useMutation(
    trpc.alert.deletePolicy.mutationOptions(
      feedback(trpc.alert.pathFilter(), (policy) => `Policy ${policy.name} deleted`),
    ),
  );
  const columns = useMemo<DataColumn<Policy>[]>(
    () => [
      {
        id: "name",
        accessorFn: (policy) => policy.name,
        meta: { title: "Policy" },
        cell: ({ row }) => <span className="font-medium">{row.original.name}</span>,
      },
      {
        id: "severity",
        accessorFn: (policy) => policy.severity,
        meta: { title: "Severity" },
        cell: ({ row }) => (
          <Badge variant={severityVariant(row.original.severity)}>{row.original.severity}</Badge>
        ),
      },
      { id: "watches", accessorFn: (policy) => describeSpec(policy.spec), meta: { title: "Watches" } },
      textColumn(
        "scope",
        "Scope",
        (policy) => [policy.siteName, policy.selector].filter(Boolean).join(" · "),
        {
          none: "everywhere",
        },
      ),
      stateColumn((policy) => ({
        label: policy.enabled ? "on" : "off",
        variant: policy.enabled ? "online" : "outline",
      })),
      actionsColumn((policy) => (
        <SwitchDeleteActions
          thing={`policy ${policy.name}`}
          enabled={policy.enabled}
          denied={denied}
          switching={update.isPending}
          onSwitch={(enabled) => update.mutate({ id: policy.id, enabled })}
          deleteConsequence="Its rule is removed from the alerting store; alerts it raised resolve."
          deleting={remove.isPending}
          onDelete={() => remove.mutate({ id: policy.id })}
        />
      )),
    ],
    [denied, update.isPending, update.mutate, remove.isPending, remove.mutate],
  );
  const sync = status.data;
  return (
    <Section
      title="Policies"
      description="Each policy becomes a rule of your organization's own alerting store; changes apply within seconds."
      actions={
        sync ? (
          <Badge
            variant={sync.inSync ? "online" : "degraded"}
            data-testid="alerting-sync"
            title={sync.lastError ?? undefined}
          >
            {sync.inSync ? "applied" : sync.lastError ? "not applied" : "applying…"}
          </Badge>
        ) : null
      }
    >
      {sync?.lastError ? (
        <p role="alert" className="text-sm text-destructive">
          Last error: {sync.lastError}
        </p>
      ) : null}
      <ApiForm form={form} label="Create an alert policy" noun="Policy" mutation={create}>
        <NameField placeholder="plant nodes down" />
        <SelectField
          name="kind"
          label="Watches"
          accessibleName="Policy kind"
          options={Object.fromEntries(Object.entries(POLICY_KINDS).map(([key, value]) => [key, value.label]))}
        />
        <SelectField name="severity" label="Severity" options={SEVERITIES} />
        {kind !== "promql" ? (
          <SelectField name="siteId" label="Site" options={siteOptions(sites.data, "every site")} />
        ) : null}
        {(POLICY_KINDS[kind]?.params ?? []).map((param) => (
          <TextField
            key={param}
            name={param}
            label={PARAM_FIELDS[param].label}
            accessibleName={PARAM_FIELDS[param].label}
            placeholder={PARAM_FIELDS[param].placeholder}
            inputMode={param === "expr" ? undefined : "numeric"}
            className={param === "expr" ? "sm:col-span-2" : undefined}
          />
        ))}
        <FormFooter label="Create policy" pendingLabel="Creating…" disabledReason={denied} />
      </ApiForm>
      <QueryTable
        query={policies}
        label="Policies"
        name="alert-policies"
        columns={columns}
        rowAttributes={(policy) => ({ "data-testid": "policy-row", "data-name": policy.name })}
        empty={
          <EmptyState icon={<BellIcon />} title="No policies yet">
            Create one above: e.g. a node offline for 5 minutes.
          </EmptyState>
        }
      />
    </Section>
  );
}
