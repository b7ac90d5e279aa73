"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "~/trpc/react";
import { ConfirmButton } from "./confirm-button";

/**
 * Approve (when pending) and revoke a node's credentials, for pages that show one node. The
 * server checks the role (operator); its refusal is shown as is.
 */
export function NodeCredentialsControl(props: { nodeId: string; name: string; status: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [problem, setProblem] = useState<string | null>(null);
  const settled = () => {
    setProblem(null);
    return queryClient.invalidateQueries();
  };
  const approve = useMutation(
    trpc.enrollment.approveNode.mutationOptions({
      onSuccess: settled,
      onError: (e) => setProblem(e.message),
    }),
  );
  const revoke = useMutation(
    trpc.enrollment.revokeNode.mutationOptions({ onSuccess: settled, onError: (e) => setProblem(e.message) }),
  );
  if (props.status === "revoked") return <p>Credentials revoked: this node can no longer connect.</p>;
  return (
    <div>
      {props.status === "pending" ? (
        <button
          type="button"
          disabled={approve.isPending}
          onClick={() => approve.mutate({ nodeId: props.nodeId })}
        >
          Approve
        </button>
      ) : null}{" "}
      <ConfirmButton
        label="Revoke credentials"
        question={`Revoke ${props.name}? It is disconnected at once and can never connect with this key again.`}
        confirmLabel="Yes, revoke"
        pending={revoke.isPending}
        onConfirm={() => revoke.mutate({ nodeId: props.nodeId })}
      />
      {problem ? <p role="alert">{problem}</p> : null}
    </div>
  );
}
