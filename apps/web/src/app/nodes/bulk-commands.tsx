"use client";

import {
  isAppCommand,
  MAX_COMMAND_NODES,
  nodeCommandFields,
  requireAppOfAppCommands,
} from "@edgefleet/api/schemas";
import { useMutation } from "@tanstack/react-query";
import { TerminalIcon } from "lucide-react";
import { useState } from "react";
import { useWatch } from "react-hook-form";
import { z } from "zod";
import { BulkActionPanel } from "~/components/bulk-action";
import { SelectField, TextField } from "~/components/forms/fields";
import { useFormFeedback } from "~/components/forms/form-feedback";
import { FormFooter } from "~/components/forms/form-footer";
import { optionalChoice } from "~/components/forms/text-fields";
import { useApiForm } from "~/components/forms/use-api-form";
import { type CommandRun, describeResult } from "~/components/node-commands";
import { toast } from "~/components/ui/sonner";
import { useTRPC } from "~/trpc/react";

/** The commands a selection can run (diagnostics are collected from one node at a time). */
const BULK_COMMANDS = {
  restart: "Restart an app",
  stop: "Stop an app",
  start: "Start an app",
  health: "Run an app's health check",
  report: "Force a status and metrics report",
};

/** The command and its app, judged by the API's fields and its rule that app commands name one. */
const commandForm = requireAppOfAppCommands(
  z.object({
    command: nodeCommandFields.shape.command,
    app: optionalChoice(nodeCommandFields.shape.app),
  }),
);

/** A command on the selected nodes, with each node's result listed (at most MAX_COMMAND_NODES a call). */
export function BulkCommands(props: { selectedIds: string[] }) {
  const trpc = useTRPC();
  const [open, setOpen] = useState(false);
  const [run, setRun] = useState<CommandRun | null>(null);
  const form = useApiForm(commandForm, { command: "restart", app: "" });
  const command = useWatch({ control: form.control, name: "command" });
  const formFeedback = useFormFeedback(form);
  const mutation = useMutation(
    trpc.node.bulkCommand.mutationOptions(
      formFeedback(trpc.node.pathFilter(), (answer) => {
        setRun(answer);
        const summary = `${answer.succeeded} of ${answer.results.length} node${answer.results.length === 1 ? "" : "s"} done`;
        if (answer.failed === 0) toast.success(summary);
        else toast.warning(`${summary}; ${answer.failed} failed`);
      }),
    ),
  );
  const count = props.selectedIds.length;
  return (
    <BulkActionPanel
      icon={<TerminalIcon aria-hidden />}
      label="Run command"
      count={count}
      testId="bulk-commands"
      open={open}
      onOpenChange={(next) => {
        setOpen(next);
        if (!next) setRun(null);
      }}
      form={form}
      formLabel="Run a command on the selected nodes"
      pending={mutation.isPending}
      onSubmit={({ command, app }) => {
        setRun(null);
        mutation.mutate({ nodeIds: props.selectedIds, command, ...(app ? { app } : {}) });
      }}
    >
      <SelectField name="command" label="Command" options={BULK_COMMANDS} />
      {isAppCommand(command) ? <TextField name="app" label="App" placeholder="vision" /> : null}
      <FormFooter
        label={`Run on ${count} selected`}
        pendingLabel="Running…"
        disabledReason={
          count === 0
            ? "select nodes first"
            : count > MAX_COMMAND_NODES
              ? `at most ${MAX_COMMAND_NODES} nodes at a time`
              : null
        }
      />
      {run ? (
        <ul
          className="grid max-h-64 gap-1 overflow-auto text-sm"
          aria-label="Results per node"
          data-testid="bulk-command-results"
        >
          {run.results.map((result) => (
            <li key={result.nodeId} className={result.ok ? "" : "text-destructive"}>
              {result.ok ? "✓ " : "✗ "}
              {describeResult(run, result)}
            </li>
          ))}
        </ul>
      ) : null}
    </BulkActionPanel>
  );
}
