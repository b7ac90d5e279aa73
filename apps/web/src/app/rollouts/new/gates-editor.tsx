"use client";

import { GATE_PRESETS } from "@edgefleet/api/schemas";
import { useQueryClient } from "@tanstack/react-query";
import { CheckIcon, PlusIcon } from "lucide-react";
import { useId, useState } from "react";
import { useFieldArray, useFormContext, useWatch } from "react-hook-form";
import { FieldGroup, FieldGroups, groupFields } from "~/components/forms/field-groups";
import { Button } from "~/components/ui/button";
import {
  FormControl,
  FormDescription,
  FormField,
  FormItem,
  FormLabel,
  FormMessage,
} from "~/components/ui/form";
import { Label } from "~/components/ui/label";
import { NativeSelect } from "~/components/ui/native-select";
import { useTRPC } from "~/trpc/react";
import { CheckboxField, SelectField, TextField } from "./fields";
import { presetGate, type RolloutFormValues } from "./rollout-form";

type Prefix = `batches.${number}`;

const METRIC_OPTIONS: Record<string, string> = {
  ...Object.fromEntries(Object.entries(GATE_PRESETS).map(([key, preset]) => [key, preset.title])),
  promql: "Custom PromQL",
};

/**
 * A batch's metric gates: added from presets (app CPU and memory, restarts, node CPU and memory,
 * bytes, RTT) or as the operator's PromQL, which can be checked against Mimir (as the
 * organization) right here; the preview checks every query again before the rollout can start.
 */
export function GatesEditor(props: { prefix: Prefix; caption: string }) {
  const { control } = useFormContext<RolloutFormValues>();
  const gates = useFieldArray({ control, name: `${props.prefix}.gates` });
  const [adding, setAdding] = useState("app_cpu");
  const addId = useId();
  return (
    <FieldGroups
      title="Metric gates"
      count={gates.fields.length}
      none="None: the batch is judged on install success only."
      className="sm:col-span-full"
      testId="gates-editor"
      add={
        <>
          <div className="grid gap-1.5">
            <Label htmlFor={addId} className="text-xs">
              Gate to add
            </Label>
            <NativeSelect
              id={addId}
              aria-label={`${props.caption} gate to add`}
              value={adding}
              onChange={(event) => setAdding(event.target.value)}
            >
              {Object.entries(METRIC_OPTIONS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </NativeSelect>
          </div>
          <Button
            type="button"
            size="sm"
            variant="outline"
            onClick={() =>
              gates.append(
                presetGate(
                  adding,
                  gates.fields.map((g) => g.name),
                ),
              )
            }
          >
            <PlusIcon aria-hidden />
            Add gate to {props.caption.toLowerCase()}
          </Button>
        </>
      }
    >
      {gates.fields.map((field, index) => (
        <GateRowEditor
          key={field.id}
          prefix={`${props.prefix}.gates.${index}`}
          caption={`${props.caption} gate ${index + 1}`}
          onRemove={() => gates.remove(index)}
        />
      ))}
    </FieldGroups>
  );
}

function GateRowEditor(props: {
  prefix: `${Prefix}.gates.${number}`;
  caption: string;
  onRemove: () => void;
}) {
  const { control } = useFormContext<RolloutFormValues>();
  const metric = useWatch({ control, name: `${props.prefix}.metric` });
  const kind = useWatch({ control, name: `${props.prefix}.kind` });
  const field = groupFields(props.prefix, props.caption);
  return (
    <FieldGroup
      caption={props.caption}
      onRemove={props.onRemove}
      className="border-dashed sm:grid-cols-[repeat(auto-fill,minmax(10rem,1fr))]"
      testId="gate-editor"
    >
      <TextField name={`${props.prefix}.name`} label="Name" />
      <SelectField name={`${props.prefix}.metric`} label="Metric" options={METRIC_OPTIONS} />
      <TextField
        {...field("windowSeconds", "window")}
        label="Window (s)"
        inputMode="numeric"
        description="At most the batch timeout."
      />
      <SelectField
        name={`${props.prefix}.kind`}
        label="Criterion"
        options={{ compare: "compare with the baseline", threshold: "absolute threshold" }}
      />
      {kind === "threshold" ? (
        <>
          <TextField {...field("max", "max")} label="Max per node" inputMode="decimal" />
          <TextField {...field("min", "min")} label="Min per node" inputMode="decimal" />
          <TextField
            {...field("failureLimit", "failure limit")}
            label="Nodes allowed outside"
            inputMode="numeric"
          />
        </>
      ) : (
        <>
          <SelectField
            {...field("worse", "worse")}
            label="Worse when"
            options={{ higher: "higher", lower: "lower", either: "either way" }}
          />
          <TextField
            {...field("tolerance", "tolerance")}
            label="Tolerance (0.2 = 20 %)"
            inputMode="decimal"
          />
          <TextField
            {...field("minDelta", "min delta")}
            label="Min absolute change"
            inputMode="decimal"
            placeholder="0"
          />
        </>
      )}
      <CheckboxField name={`${props.prefix}.critical`} label="Critical (fails the batch)" />
      {metric === "promql" ? <PromqlField prefix={props.prefix} caption={props.caption} /> : null}
    </FieldGroup>
  );
}

/** The PromQL editor: a monospace textarea and a check that runs it against Mimir as the organization. */
function PromqlField(props: { prefix: `${Prefix}.gates.${number}`; caption: string }) {
  const form = useFormContext<RolloutFormValues>();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [checked, setChecked] = useState<{ series: number; nodes: number; withoutNode: number } | null>(null);
  const [checking, setChecking] = useState(false);
  const field = `${props.prefix}.promql` as const;
  const check = async () => {
    setChecked(null);
    form.clearErrors(field);
    const promql = form.getValues(field);
    const windowSeconds = Number(form.getValues(`${props.prefix}.windowSeconds`)) || 300;
    setChecking(true);
    try {
      setChecked(
        await queryClient.fetchQuery(
          trpc.rollout.checkGateQuery.queryOptions({ promql, windowSeconds }, { retry: false, staleTime: 0 }),
        ),
      );
    } catch (error) {
      const message = (error as Error).message.replace(/^promql: /, "");
      form.setError(field, { type: "server", message }, { shouldFocus: true });
    } finally {
      setChecking(false);
    }
  };
  return (
    <div className="grid gap-2 sm:col-span-full">
      <FormField
        control={form.control}
        name={field}
        render={({ field: input }) => (
          <FormItem>
            <FormLabel>PromQL (one value per node, by a node label)</FormLabel>
            <FormControl>
              <textarea
                aria-label={`${props.caption} PromQL`}
                rows={3}
                spellCheck={false}
                className="min-h-20 w-full rounded-md border border-input bg-transparent px-3 py-2 font-mono text-sm shadow-xs outline-none focus-visible:border-ring focus-visible:ring-[3px] focus-visible:ring-ring/50 aria-invalid:border-destructive"
                {...input}
                onChange={(event) => {
                  setChecked(null);
                  input.onChange(event);
                }}
                value={input.value ?? ""}
              />
            </FormControl>
            <FormDescription>
              <code>$window</code> is the gate's window; the organization is implied (never name{" "}
              <code>org</code>).
            </FormDescription>
            <FormMessage />
          </FormItem>
        )}
      />
      <div className="flex flex-wrap items-center gap-2">
        <Button type="button" size="sm" variant="outline" onClick={check} disabled={checking}>
          <CheckIcon aria-hidden />
          {checking ? "Checking…" : "Check against Mimir"}
        </Button>
        {checked ? (
          <output className="text-sm" data-testid="promql-check">
            Valid: {checked.series} series for {checked.nodes} node(s) now
            {checked.withoutNode > 0 ? `; ${checked.withoutNode} without a node label (ignored)` : ""}.
          </output>
        ) : null}
      </div>
    </div>
  );
}
