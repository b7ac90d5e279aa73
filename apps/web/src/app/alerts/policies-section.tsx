"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useMutation, useQuery } from "@tanstack/react-query";
import { BellIcon } from "lucide-react";
import { useMemo } from "react";
import { useWatch } from "react-hook-form";
import { useActionFeedback } from "~/components/action-feedback";
import { nameColumn, stateColumn, textColumn } from "~/components/data-table/columns";
import type { DataColumn } from "~/components/data-table/data-table";
import { QueryTable } from "~/components/data-table/query-table";
import { ApiForm } from "~/components/forms/api-form";
import { NameField, SelectField, TextField } from "~/components/forms/fields";
import { useFormFeedback } from "~/components/forms/form-feedback";
import { FormFooter } from "~/components/forms/form-footer";
import { siteOptions } from "~/components/forms/select-options";
import { useApiForm } from "~/components/forms/use-api-form";
import { type Role, roleDenial } from "~/components/role-reason";
import { Badge } from "~/components/ui/badge";
import { Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { toast } from "~/components/ui/sonner";
import { useTRPC } from "~/trpc/react";
import { POLICY_KINDS, type PolicyKind, policyForm } from "./policy-form";
import { ALERTS_POLLING, severityVariant } from "./shared";
import { switchDeleteColumn } from "./switch-delete-actions";

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

const noPolicies = (
  <EmptyState icon={<BellIcon />} title="No policies yet">
    Create one above: e.g. a node offline for 5 minutes.
  </EmptyState>
);

/** Alert policies: what should wake someone. Operators create, switch off and on, and delete them. */
export function PoliciesSection(props: { role: Role }) {
  const trpc = useTRPC();
  const denied = roleDenial(props.role, "operator");
  const policies = useQuery(trpc.alert.policies.queryOptions());
  const status = useQuery(trpc.alert.status.queryOptions(undefined, ALERTS_POLLING));
  const sites = useQuery(trpc.site.list.queryOptions());
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
  const formFeedback = useFormFeedback(form, { NOT_FOUND: ["siteId", /^site /] });
  const create = useMutation(
    trpc.alert.createPolicy.mutationOptions(
      formFeedback(trpc.alert.pathFilter(), (policy) => {
        toast.success(`Policy ${policy.name} created`);
        form.reset({ ...form.getValues(), name: "", expr: "" });
      }),
    ),
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
      nameColumn("Policy"),
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
      switchDeleteColumn<Policy>({
        thing: (policy) => `policy ${policy.name}`,
        deleteConsequence: "Its rule is removed from the alerting store; alerts it raised resolve.",
        denied,
        switching: update.isPending,
        onSwitch: update.mutate,
        deleting: remove.isPending,
        onDelete: remove.mutate,
      }),
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
        rowTestId="policy-row"
        empty={noPolicies}
      />
    </Section>
  );
}
