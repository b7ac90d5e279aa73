"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { parseLabelAssignments, parseLabelKeys } from "~/components/label-input";
import { useTRPC } from "~/trpc/react";
import styles from "./nodes.module.css";

/** Add/remove labels on the selected rows, or on every node the current selector matches. */
export function BulkLabels(props: { selectedIds: string[]; selector: string; onDone: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [add, setAdd] = useState("");
  const [remove, setRemove] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const mutation = useMutation(
    trpc.node.bulkUpdateLabels.mutationOptions({
      onSuccess: async ({ updated }) => {
        setResult(`${updated} node${updated === 1 ? "" : "s"} updated`);
        setAdd("");
        setRemove("");
        props.onDone();
        await queryClient.invalidateQueries(trpc.node.pathFilter());
      },
      onError: (error) => setProblem(error.message),
    }),
  );

  const submit = (target: { ids: string[] } | { selector: string }) => (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    setResult(null);
    try {
      mutation.mutate({ target, add: parseLabelAssignments(add), remove: parseLabelKeys(remove) });
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
    }
  };

  return (
    <form className={styles.bulk} aria-label="Edit labels" onSubmit={submit({ ids: props.selectedIds })}>
      <input
        aria-label="Labels to add"
        placeholder="add: ring=1, owner=ops"
        value={add}
        onChange={(e) => setAdd(e.target.value)}
      />
      <input
        aria-label="Label keys to remove"
        placeholder="remove: gpu, tmp"
        value={remove}
        onChange={(e) => setRemove(e.target.value)}
      />
      <button type="submit" disabled={props.selectedIds.length === 0 || mutation.isPending}>
        Apply to {props.selectedIds.length} selected
      </button>
      <button
        type="button"
        disabled={!props.selector || mutation.isPending}
        onClick={submit({ selector: props.selector })}
        title="Every node the selector matches, loaded or not"
      >
        Apply to all matching selector
      </button>
      {problem ? (
        <span role="alert" className={styles.fieldError}>
          {problem}
        </span>
      ) : null}
      {result ? <span role="status">{result}</span> : null}
    </form>
  );
}
