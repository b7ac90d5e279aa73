"use client";

import { ActionButton } from "~/components/action-button";
import { ConfirmAction } from "~/components/confirm-action";
import { actionsColumn } from "~/components/data-table/columns";
import type { DataColumn } from "~/components/data-table/data-table";
import { Hint } from "~/components/ui/tooltip";

/** A row that can be switched off and on, and deleted: a policy or a channel. */
interface Switchable {
  id: string;
  enabled: boolean;
}

/**
 * How a table's rows are switched and deleted. `denied` (the person's role) disables both;
 * `offReason` explains a switch that the system turned off (it can still be switched on).
 */
interface SwitchDeleteOptions<Row> {
  /** What the row is, in the delete question: "policy plant nodes down". */
  thing: (row: Row) => string;
  offReason?: (row: Row) => string | null;
  deleteConsequence: string;
  denied: string | null;
  switching: boolean;
  onSwitch: (input: { id: string; enabled: boolean }) => void;
  deleting: boolean;
  onDelete: (input: { id: string }) => void;
}

/** The actions column of a policy or channel table: switch a row off or on, delete it after a confirmation. */
export function switchDeleteColumn<Row extends Switchable>(
  options: SwitchDeleteOptions<Row>,
): DataColumn<Row> {
  return actionsColumn((row) => <SwitchDeleteActions row={row} {...options} />);
}

function SwitchDeleteActions<Row extends Switchable>(props: SwitchDeleteOptions<Row> & { row: Row }) {
  const { row } = props;
  const offReason = props.offReason?.(row);
  const toggle = (
    <ActionButton
      pending={props.switching}
      disabledReason={props.denied}
      onClick={() => props.onSwitch({ id: row.id, enabled: !row.enabled })}
    >
      {row.enabled ? "Switch off" : "Switch on"}
    </ActionButton>
  );
  return (
    <div className="flex gap-2">
      {offReason && !props.denied ? <Hint text={offReason}>{toggle}</Hint> : toggle}
      <ConfirmAction
        label="Delete"
        question={`Delete the ${props.thing(row)}?`}
        consequence={props.deleteConsequence}
        confirmLabel="Delete"
        variant="destructive"
        onConfirm={() => props.onDelete({ id: row.id })}
        pending={props.deleting}
        disabledReason={props.denied}
      />
    </div>
  );
}
