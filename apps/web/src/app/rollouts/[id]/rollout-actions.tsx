"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useMutation } from "@tanstack/react-query";
import { useActionFeedback } from "~/components/action-feedback";
import { ConfirmAction } from "~/components/confirm-action";
import { useTRPC } from "~/trpc/react";

type Detail = RouterOutputs["rollout"]["byId"];
type ActionType = "start" | "pause" | "resume" | "approve" | "abort" | "rollback";

/** What each action does, said before it is done (the confirmation dialog). */
const ACTIONS: Array<{ type: ActionType; label: string; consequence: string; destructive?: boolean }> = [
  { type: "start", label: "Start", consequence: "The plan is frozen and the first batch starts now." },
  {
    type: "approve",
    label: "Approve",
    consequence: "The next batch starts now (within its sites' maintenance windows and budgets).",
  },
  {
    type: "pause",
    label: "Pause",
    consequence: "No new node is updated until it is resumed; nodes already updating finish.",
  },
  { type: "resume", label: "Resume", consequence: "The rollout goes on where it stopped." },
  {
    type: "abort",
    label: "Abort",
    consequence: "The rollout ends here. Every node stays on the version it runs now.",
    destructive: true,
  },
  {
    type: "rollback",
    label: "Roll back",
    consequence: "Every node this rollout touched goes back to the version it ran before, batch by batch.",
    destructive: true,
  },
];

/** The person's actions on a rollout; each disabled with the server's reason (status or role). */
export function RolloutActions(props: { detail: Detail }) {
  const trpc = useTRPC();
  const said = useActionFeedback();
  // Every action says what it did and the status it led to, or the server's refusal.
  const feedback = (done: string) =>
    said(
      trpc.rollout.pathFilter(),
      (result: { status: string }) => `${done}: now ${result.status.replace(/_/g, " ")}`,
    );
  const mutations = {
    start: useMutation(trpc.rollout.start.mutationOptions(feedback("Started"))),
    approve: useMutation(trpc.rollout.approve.mutationOptions(feedback("Approved"))),
    pause: useMutation(trpc.rollout.pause.mutationOptions(feedback("Paused"))),
    resume: useMutation(trpc.rollout.resume.mutationOptions(feedback("Resumed"))),
    abort: useMutation(trpc.rollout.abort.mutationOptions(feedback("Aborted"))),
    rollback: useMutation(trpc.rollout.rollback.mutationOptions(feedback("Rolling back"))),
  };
  const name = `${props.detail.appName} → ${props.detail.version}`;
  return (
    // biome-ignore lint/a11y/useSemanticElements: a toolbar of buttons, not a form fieldset
    <div
      role="group"
      aria-label="Rollout actions"
      className="flex flex-wrap gap-2"
      data-testid="rollout-actions"
    >
      {ACTIONS.map((action) => {
        const state = props.detail.actions[action.type];
        const mutation = mutations[action.type];
        return (
          <ConfirmAction
            key={action.type}
            label={action.label}
            question={`${action.label} ${name}?`}
            consequence={action.consequence}
            confirmLabel={`Yes, ${action.label.toLowerCase()}`}
            variant={action.destructive ? "destructive" : action.type === "approve" ? "default" : "outline"}
            disabledReason={state?.allowed ? null : (state?.reason ?? "not possible now")}
            pending={mutation.isPending}
            onConfirm={() => mutation.mutate({ id: props.detail.id })}
          />
        );
      })}
    </div>
  );
}
