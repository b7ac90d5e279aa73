"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "~/trpc/react";
import { toast } from "./ui/sonner";

export type CommandRun = RouterOutputs["node"]["command"];
export type CommandResult = CommandRun["results"][number];

const VERBS: Record<CommandRun["command"], string> = {
  restart: "Restarted",
  stop: "Stopped",
  start: "Started",
  health: "Health check of",
  diag: "Diagnostics of",
  report: "Report forced on",
};

/** One toast line for one node's result: what happened, or why not (the node's or the gateway's words). */
export function describeResult(run: CommandRun, result: CommandResult): string {
  const who = result.nodeName ?? result.nodeId;
  if (!result.ok) return `${who}: ${result.error ?? result.code ?? "failed"}`;
  if (result.health) {
    return result.health.healthy
      ? `${run.app} on ${who} is healthy`
      : `${run.app} on ${who} is unhealthy: ${result.health.reason ?? "no reason given"}`;
  }
  const target = run.app ? `${run.app} on ${who}` : who;
  const restarts = result.instance ? ` (${result.instance.state}, ${result.instance.restarts} restarts)` : "";
  return `${VERBS[run.command]} ${target}${restarts}`;
}

/** Saves a diagnostics bundle as a JSON file named after the node and the time. */
export function downloadDiagnostics(result: CommandResult): void {
  if (!result.diagnostics) return;
  const blob = new Blob([JSON.stringify({ node: result.nodeName, ...result.diagnostics }, null, 2)], {
    type: "application/json",
  });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = `diagnostics-${result.nodeName ?? result.nodeId}-${new Date().toISOString().replaceAll(":", "-")}.json`;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1_000);
}

/**
 * Runs a command on one node and toasts its outcome; a diagnostics bundle is downloaded. The
 * server checks the role per command (viewers none, stop an admin) and says so when it refuses.
 */
export function useNodeCommand() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return useMutation(
    trpc.node.command.mutationOptions({
      onSuccess: async (run) => {
        for (const result of run.results) {
          if (result.ok) toast.success(describeResult(run, result));
          else toast.error(describeResult(run, result));
          if (result.ok && run.command === "diag") downloadDiagnostics(result);
        }
        await queryClient.invalidateQueries(trpc.node.byId.pathFilter());
      },
      onError: (error) => toast.error(error.message),
    }),
  );
}
