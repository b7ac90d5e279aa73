"use client";

import { useFormContext, useWatch } from "react-hook-form";
import { SelectField, TextField } from "~/components/forms/fields";
import type { RolloutFormValues } from "./rollout-form";

type Prefix = "defaults" | `batches.${number}`;

/**
 * A batch policy's fields (success threshold, timeout, offline nodes, pause after), for the
 * rollout's defaults or one batch; a batch's empty choice means "the default".
 */
export function PolicyFields(props: { prefix: Prefix; caption: string }) {
  const { control } = useFormContext<RolloutFormValues>();
  const pause = useWatch({ control, name: `${props.prefix}.pauseAfter` });
  const inherits = props.prefix !== "defaults";
  const inherit: Record<string, string> = inherits ? { "": "default" } : {};
  const name = (field: string) => `${props.caption} ${field}`;
  return (
    <>
      <TextField<RolloutFormValues>
        name={`${props.prefix}.successThreshold`}
        label="Success threshold (%)"
        accessibleName={name("success threshold")}
        inputMode="decimal"
        placeholder={inherits ? "default" : undefined}
      />
      <TextField<RolloutFormValues>
        name={`${props.prefix}.timeoutSeconds`}
        label="Timeout per node (s)"
        accessibleName={name("timeout")}
        inputMode="numeric"
        placeholder={inherits ? "default" : undefined}
      />
      <SelectField<RolloutFormValues>
        name={`${props.prefix}.offline`}
        label="Offline nodes"
        accessibleName={name("offline policy")}
        options={{
          ...inherit,
          skip: "skip, update on return",
          wait: "wait for them",
          fail: "count as failed",
        }}
      />
      <SelectField<RolloutFormValues>
        name={`${props.prefix}.pauseAfter`}
        label="Then"
        accessibleName={name("pause after")}
        options={{ ...inherit, none: "go on", approval: "wait for approval", timed: "pause for a while" }}
      />
      {pause === "timed" ? (
        <TextField<RolloutFormValues>
          name={`${props.prefix}.pauseSeconds`}
          label="Pause (s)"
          accessibleName={name("pause seconds")}
          inputMode="numeric"
        />
      ) : null}
    </>
  );
}
