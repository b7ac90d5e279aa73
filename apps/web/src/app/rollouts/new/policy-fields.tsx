"use client";

import { useFormContext, useWatch } from "react-hook-form";
import { groupFields } from "~/components/forms/field-groups";
import { SelectField, TextField } from "./fields";
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
  const placeholder = inherits ? "default" : undefined;
  const field = groupFields(props.prefix, props.caption);
  return (
    <>
      <TextField
        {...field("successThreshold", "success threshold")}
        label="Success threshold (%)"
        inputMode="decimal"
        placeholder={placeholder}
      />
      <TextField
        {...field("timeoutSeconds", "timeout")}
        label="Timeout per node (s)"
        inputMode="numeric"
        placeholder={placeholder}
      />
      <SelectField
        {...field("offline", "offline policy")}
        label="Offline nodes"
        options={{
          ...inherit,
          skip: "skip, update on return",
          wait: "wait for them",
          fail: "count as failed",
        }}
      />
      <SelectField
        {...field("pauseAfter", "pause after")}
        label="Then"
        options={{ ...inherit, none: "go on", approval: "wait for approval", timed: "pause for a while" }}
      />
      {pause === "timed" ? (
        <TextField {...field("pauseSeconds", "pause seconds")} label="Pause (s)" inputMode="numeric" />
      ) : null}
    </>
  );
}
