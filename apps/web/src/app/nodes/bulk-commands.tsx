"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { TerminalIcon } from "lucide-react";
import { useState } from "react";
import { BulkActionPanel } from "~/components/bulk-action";
import { type CommandRun, describeResult } from "~/components/node-commands";
import { Button } from "~/components/ui/button";
import { Input } from "~/components/ui/input";
import { Label } from "~/components/ui/label";
import { NativeSelect } from "~/components/ui/native-select";
import { toast } from "~/components/ui/sonner";
import { useTRPC } from "~/trpc/react";

const BULK_COMMANDS = [
  { value: "restart", label: "Restart an app", app: true },
  { value: "stop", label: "Stop an app", app: true },
  { value: "start", label: "Start an app", app: true },
  { value: "health", label: "Run an app's health check", app: true },
  { value: "report", label: "Force a status and metrics report", app: false },
] as const;
type BulkCommand = (typeof BULK_COMMANDS)[number]["value"];

/** A command on the selected nodes, with each node's result listed (at most 100 nodes a call). */
export function BulkCommands(props: { selectedIds: string[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [command, setCommand] = useState<BulkCommand>("restart");
  const [app, setApp] = useState("");
  const [run, setRun] = useState<CommandRun | null>(null);
  const mutation = useMutation(
    trpc.node.bulkCommand.mutationOptions({
      onSuccess: async (answer) => {
        setRun(answer);
        const summary = `${answer.succeeded} of ${answer.results.length} node${answer.results.length === 1 ? "" : "s"} done`;
        if (answer.failed === 0) toast.success(summary);
        else toast.warning(`${summary}; ${answer.failed} failed`);
        await queryClient.invalidateQueries(trpc.node.pathFilter());
      },
      onError: (error) => toast.error(error.message),
    }),
  );
  const count = props.selectedIds.length;
  const needsApp = BULK_COMMANDS.find((entry) => entry.value === command)?.app ?? false;
  const reason =
    count === 0
      ? "select nodes first"
      : count > 100
        ? "at most 100 nodes at a time"
        : needsApp && app.trim() === ""
          ? "name the app"
          : null;
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
    >
      <form
        className="grid gap-3"
        aria-label="Run a command on the selected nodes"
        onSubmit={(event) => {
          event.preventDefault();
          if (reason) return;
          setRun(null);
          mutation.mutate({
            nodeIds: props.selectedIds,
            command,
            ...(needsApp ? { app: app.trim() } : {}),
          });
        }}
      >
        <div className="grid gap-1">
          <Label htmlFor="bulk-command">Command</Label>
          <NativeSelect
            id="bulk-command"
            value={command}
            onChange={(event) => setCommand(event.target.value as BulkCommand)}
          >
            {BULK_COMMANDS.map((entry) => (
              <option key={entry.value} value={entry.value}>
                {entry.label}
              </option>
            ))}
          </NativeSelect>
        </div>
        {needsApp ? (
          <div className="grid gap-1">
            <Label htmlFor="bulk-command-app">App</Label>
            <Input
              id="bulk-command-app"
              value={app}
              placeholder="vision"
              onChange={(event) => setApp(event.target.value)}
            />
          </div>
        ) : null}
        <Button
          type="submit"
          size="sm"
          disabled={Boolean(reason) || mutation.isPending}
          title={reason ?? undefined}
        >
          {mutation.isPending ? "Running…" : `Run on ${count} selected`}
        </Button>
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
      </form>
    </BulkActionPanel>
  );
}
