"use client";

import { ActivityIcon, DownloadIcon, PlayIcon, RefreshCwIcon } from "lucide-react";
import { ActionButton } from "~/components/action-button";
import { ConfirmAction } from "~/components/confirm-action";
import { useNodeCommand } from "~/components/node-commands";
import { Button } from "~/components/ui/button";
import { Hint } from "~/components/ui/tooltip";

function offlineReason(status: string): string | null {
  return status === "online" ? null : `the node is ${status}: commands reach online nodes only`;
}

/** Node-wide operations: what each asks of the agent, and what its button says meanwhile. */
const NODE_OPERATIONS = [
  {
    command: "report",
    Icon: RefreshCwIcon,
    label: "Force report",
    busy: "Reporting…",
    hint: "Ask the node for a status and a metrics report now",
  },
  {
    command: "diag",
    Icon: DownloadIcon,
    label: "Download diagnostics",
    busy: "Collecting…",
    hint: "Agent version, settings, disk, recent log and apps, as a JSON file",
  },
] as const;

/** Node-wide operations: force a status and metrics report, download a diagnostics bundle. */
export function NodeOperations(props: { nodeId: string; status: string }) {
  const command = useNodeCommand();
  const reason = offlineReason(props.status);
  const pending = command.isPending ? command.variables?.command : null;
  return (
    <div className="flex flex-wrap gap-2" data-testid="node-operations">
      {NODE_OPERATIONS.map(({ command: name, Icon, label, busy, hint }) => {
        const button = (
          <ActionButton
            key={name}
            pending={command.isPending}
            disabledReason={reason}
            onClick={() => command.mutate({ id: props.nodeId, command: name })}
          >
            <Icon aria-hidden />
            {pending === name ? busy : label}
          </ActionButton>
        );
        return reason ? (
          button
        ) : (
          <Hint key={name} text={hint}>
            {button}
          </Hint>
        );
      })}
    </div>
  );
}

/** Restart, stop, start and health check of one app on one node (a cell of the apps table). */
export function AppOperations(props: {
  nodeId: string;
  nodeName: string;
  app: string;
  state: string;
  status: string;
}) {
  const command = useNodeCommand();
  const reason = offlineReason(props.status) ?? (command.isPending ? "a command is running" : null);
  const run = (name: "restart" | "stop" | "start" | "health") =>
    command.mutate({ id: props.nodeId, command: name, app: props.app });
  return (
    <div className="flex flex-wrap justify-end gap-1" data-testid={`app-operations-${props.app}`}>
      <ConfirmAction
        label="Restart"
        question={`Restart ${props.app} on ${props.nodeName}?`}
        consequence="Its process is stopped (SIGTERM, then SIGKILL after its grace period) and started again."
        confirmLabel="Yes, restart"
        pending={command.isPending && command.variables?.command === "restart"}
        disabledReason={reason}
        onConfirm={() => run("restart")}
      />
      {props.state === "stopped" ? (
        <Button
          type="button"
          size="sm"
          variant="outline"
          disabled={Boolean(reason)}
          onClick={() => run("start")}
        >
          <PlayIcon aria-hidden />
          Start
        </Button>
      ) : (
        <ConfirmAction
          label="Stop"
          variant="destructive"
          question={`Stop ${props.app} on ${props.nodeName}?`}
          consequence="It stays stopped until somebody starts it, the agent restarts or a new version arrives."
          confirmLabel="Yes, stop"
          disabledReason={reason}
          onConfirm={() => run("stop")}
        />
      )}
      <Button
        type="button"
        size="sm"
        variant="ghost"
        disabled={Boolean(reason)}
        title="Run the app's health check once, now"
        onClick={() => run("health")}
      >
        <ActivityIcon aria-hidden />
        Health check
      </Button>
    </div>
  );
}
