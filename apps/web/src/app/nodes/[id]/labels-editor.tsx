"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { parseLabelAssignments } from "~/components/label-input";
import { useTRPC } from "~/trpc/react";
import styles from "./detail.module.css";

/** The node's labels as removable chips, and a `key=value` field to add or change some. */
export function LabelsEditor(props: { nodeId: string; labels: Record<string, string> }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [add, setAdd] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const mutation = useMutation(
    trpc.node.bulkUpdateLabels.mutationOptions({
      onSuccess: async () => {
        setAdd("");
        await queryClient.invalidateQueries(trpc.node.pathFilter());
      },
      onError: (error) => setProblem(error.message),
    }),
  );
  const change = (labels: { add?: Record<string, string>; remove?: string[] }) => {
    setProblem(null);
    mutation.mutate({ target: { ids: [props.nodeId] }, ...labels });
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    try {
      change({ add: parseLabelAssignments(add) });
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
    }
  };

  const entries = Object.entries(props.labels).sort(([a], [b]) => a.localeCompare(b));
  return (
    <>
      <ul className={styles.labels} data-testid="node-labels">
        {entries.length === 0 ? <li className={styles.muted}>none</li> : null}
        {entries.map(([key, value]) => (
          <li key={key} className={styles.label}>
            <span className="mono">
              {key}={value}
            </span>
            <button
              type="button"
              aria-label={`Remove label ${key}`}
              disabled={mutation.isPending}
              onClick={() => change({ remove: [key] })}
            >
              ×
            </button>
          </li>
        ))}
      </ul>
      <form onSubmit={submit} className={styles.addLabel}>
        <input
          aria-label="Add labels"
          placeholder="key=value, key2=value2"
          value={add}
          onChange={(event) => setAdd(event.target.value)}
        />
        <button type="submit" disabled={mutation.isPending || !add.trim()}>
          Set
        </button>
      </form>
      {problem ? (
        <p role="alert" className={styles.error}>
          {problem}
        </p>
      ) : null}
    </>
  );
}
