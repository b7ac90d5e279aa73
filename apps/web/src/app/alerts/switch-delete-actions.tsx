"use client";

import { ConfirmAction } from "~/components/confirm-action";
import { Button } from "~/components/ui/button";
import { Hint } from "~/components/ui/tooltip";

/**
 * The row actions of a policy or a channel: switch it off or on, delete it after a confirmation.
 * `denied` (the person's role) disables both; `offReason` explains a switch that the system turned off (it can still be switched on).
 */
export function SwitchDeleteActions(props: {
  thing: string;
  enabled: boolean;
  denied: string | null;
  offReason?: string | null;
  switching: boolean;
  onSwitch: (enabled: boolean) => void;
  deleteConsequence: string;
  deleting: boolean;
  onDelete: () => void;
}) {
  const toggle = (
    <Button
      type="button"
      variant="outline"
      size="sm"
      disabled={props.switching}
      disabledReason={props.denied}
      onClick={() => props.onSwitch(!props.enabled)}
    >
      {props.enabled ? "Switch off" : "Switch on"}
    </Button>
  );
  return (
    <div className="flex gap-2">
      {props.offReason && !props.denied ? <Hint text={props.offReason}>{toggle}</Hint> : toggle}
      <ConfirmAction
        label="Delete"
        question={`Delete the ${props.thing}?`}
        consequence={props.deleteConsequence}
        confirmLabel="Delete"
        variant="destructive"
        onConfirm={props.onDelete}
        pending={props.deleting}
        disabledReason={props.denied}
      />
    </div>
  );
}
