"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "~/trpc/react";
import { ConfirmAction } from "./confirm-action";
import { Button } from "./ui/button";
import { toast } from "./ui/sonner";

/**
 * Approve (when pending) and revoke a node's credentials, for pages that show one node. The
 * server checks the role (operator); its refusal is shown as is.
 */
export function NodeCredentialsControl(props: { nodeId: string; name: string; status: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const settled = (message: string) => {
    toast.success(message);
    return queryClient.invalidateQueries();
  };
  const approve = useMutation(
    trpc.enrollment.approveNode.mutationOptions({
      onSuccess: (node) => settled(`${node.name} approved`),
      onError: (e) => toast.error(e.message),
    }),
  );
  const revoke = useMutation(
    trpc.enrollment.revokeNode.mutationOptions({
      onSuccess: (node) => settled(`${node.name} revoked`),
      onError: (e) => toast.error(e.message),
    }),
  );
  if (props.status === "revoked") {
    return <p className="text-sm">Credentials revoked: this node can no longer connect.</p>;
  }
  return (
    <div className="flex flex-wrap gap-2">
      {props.status === "pending" ? (
        <Button
          type="button"
          size="sm"
          disabled={approve.isPending}
          onClick={() => approve.mutate({ nodeId: props.nodeId })}
        >
          Approve
        </Button>
      ) : null}
      <ConfirmAction
        label="Revoke credentials"
        variant="destructive"
        question={`Revoke ${props.name}?`}
        consequence="It is disconnected at once and can never connect with this key again."
        confirmLabel="Yes, revoke"
        pending={revoke.isPending}
        onConfirm={() => revoke.mutate({ nodeId: props.nodeId })}
      />
    </div>
  );
}
