"use client";

import { bulkUpdateLabelsInput } from "@edgefleet/api/schemas";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { XIcon } from "lucide-react";
import { z } from "zod";
import { ApiForm } from "~/components/forms/api-form";
import { TextField } from "~/components/forms/fields";
import { FormFooter } from "~/components/forms/form-footer";
import { labelAssignmentsText } from "~/components/forms/text-fields";
import { showServerError, useApiForm } from "~/components/forms/use-api-form";
import { toast } from "~/components/ui/sonner";
import { useTRPC } from "~/trpc/react";

const addForm = z.object({ add: labelAssignmentsText(bulkUpdateLabelsInput.shape.add) });

/** The node's labels as removable chips, and a `key=value` field to add or change some. */
export function LabelsEditor(props: { nodeId: string; labels: Record<string, string> }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const form = useApiForm(addForm, { add: "" });
  const mutation = useMutation(
    trpc.node.bulkUpdateLabels.mutationOptions({
      onSuccess: async () => {
        form.reset({ add: "" });
        await queryClient.invalidateQueries(trpc.node.pathFilter());
      },
      onError: (error) => {
        showServerError(form, error);
        toast.error(error.message);
      },
    }),
  );
  const change = (labels: { add?: Record<string, string>; remove?: string[] }) =>
    mutation.mutate({ target: { ids: [props.nodeId] }, add: {}, remove: [], ...labels });

  const entries = Object.entries(props.labels).sort(([a], [b]) => a.localeCompare(b));
  return (
    <>
      <ul className="flex flex-wrap gap-1.5" data-testid="node-labels">
        {entries.length === 0 ? <li className="text-sm text-muted-foreground">none</li> : null}
        {entries.map(([key, value]) => (
          <li
            key={key}
            className="inline-flex items-center gap-1 rounded-md border bg-muted py-0.5 pr-0.5 pl-2 text-xs"
          >
            <span className="font-mono">
              {key}={value}
            </span>
            <button
              type="button"
              aria-label={`Remove label ${key}`}
              disabled={mutation.isPending}
              onClick={() => change({ remove: [key] })}
              className="rounded p-0.5 text-muted-foreground outline-none hover:bg-accent hover:text-foreground focus-visible:ring-2 focus-visible:ring-ring/50"
            >
              <XIcon aria-hidden className="size-3.5" />
            </button>
          </li>
        ))}
      </ul>
      <ApiForm
        form={form}
        label="Add labels"
        className="sm:grid-cols-1"
        pending={mutation.isPending}
        onSubmit={(values) => change(values)}
      >
        <TextField
          name="add"
          label="Add or change"
          accessibleName="Add labels"
          placeholder="key=value, key2=value2"
        />
        <FormFooter label="Set" pendingLabel="Saving…" />
      </ApiForm>
    </>
  );
}
