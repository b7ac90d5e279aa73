"use client";

import { PlusIcon } from "lucide-react";
import { useFieldArray, useFormContext, useWatch } from "react-hook-form";
import { FieldGroup, groupFields } from "~/components/forms/field-groups";
import { Button } from "~/components/ui/button";
import { Section } from "~/components/ui/card";
import { SelectField, TextField } from "./fields";
import { GatesEditor } from "./gates-editor";
import { PolicyFields } from "./policy-fields";
import { emptyBatch, type RolloutFormValues } from "./rollout-form";

/** The batch sequence; the nodes no batch takes form an implicit last batch (with the defaults). */
export function BatchesEditor() {
  const { control } = useFormContext<RolloutFormValues>();
  const batches = useFieldArray({ control, name: "batches" });
  return (
    <Section
      title="Batches"
      description="In order; each takes nodes no earlier batch took. The nodes left over form a last batch of their own."
      actions={
        <Button
          type="button"
          size="sm"
          variant="outline"
          onClick={() => batches.append(emptyBatch("percent"))}
        >
          <PlusIcon aria-hidden />
          Add batch
        </Button>
      }
    >
      {batches.fields.map((field, index) => (
        <BatchRow
          key={field.id}
          index={index}
          onRemove={batches.fields.length > 1 ? () => batches.remove(index) : null}
        />
      ))}
    </Section>
  );
}

function BatchRow(props: { index: number; onRemove: (() => void) | null }) {
  const { control } = useFormContext<RolloutFormValues>();
  const prefix = `batches.${props.index}` as const;
  const kind = useWatch({ control, name: `${prefix}.kind` });
  const caption = `Batch ${props.index + 1}`;
  const field = groupFields(prefix, caption);
  return (
    <FieldGroup caption={caption} onRemove={props.onRemove} testId="batch-editor">
      <SelectField
        name={`${prefix}.kind`}
        label="Size"
        options={{
          count: "a number of nodes",
          percent: "a percentage",
          selector: "nodes matching a selector",
        }}
      />
      {kind === "selector" ? (
        <>
          <TextField name={`${prefix}.selector`} label="Selector" placeholder="tier=canary" />
          <TextField {...field("limit", "limit")} label="At most" placeholder="10 or 25%" />
        </>
      ) : (
        <TextField
          {...field(kind, kind)}
          label={kind === "count" ? "Nodes" : "Percent of the target"}
          inputMode="decimal"
        />
      )}
      <PolicyFields prefix={prefix} caption={caption} />
      <GatesEditor prefix={prefix} caption={caption} />
    </FieldGroup>
  );
}
