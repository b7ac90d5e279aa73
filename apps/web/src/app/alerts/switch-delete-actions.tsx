"use client";

import { ConfirmAction } from "~/components/confirm-action";
import { Button } from "~/components/ui/button";

/**
 * The row actions of a policy or a channel: switch it off or on, delete it after a confirmation.
 * `denied` (the person's role) disables both; `title` explains a switch that is off for another reason.
 */
export function SwitchDeleteActions(props: {
  thing: string;
  enabled: boolean;
  denied: string | null;
  title?: string | null;
  switching: boolean;
  onSwitch: (enabled: boolean) => void;
  deleteConsequence: string;
  deleting: boolean;
  onDelete: () => void;
}) {
  return (
    <div className="flex gap-2">
      <Button
        type="button"
        variant="outline"
        size="sm"
        disabled={Boolean(props.denied) || props.switching}
        title={props.denied ?? props.title ?? undefined}
        onClick={() => props.onSwitch(!props.enabled)}
      >
        {props.enabled ? "Switch off" : "Switch on"}
      </Button>
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
