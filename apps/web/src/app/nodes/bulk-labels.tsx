"use client";

import { bulkUpdateLabelsInput } from "@edgefleet/api/schemas";
import { useMutation } from "@tanstack/react-query";
import { TagsIcon } from "lucide-react";
import { useState } from "react";
import { z } from "zod";
import { BulkActionPanel } from "~/components/bulk-action";
import { TextField } from "~/components/forms/fields";
import { useFormFeedback } from "~/components/forms/form-feedback";
import { FormFooter } from "~/components/forms/form-footer";
import { labelAssignmentsText, labelKeysText } from "~/components/forms/text-fields";
import { useApiForm } from "~/components/forms/use-api-form";
import { Button } from "~/components/ui/button";
import { toast } from "~/components/ui/sonner";
import { useTRPC } from "~/trpc/react";

/** The two text fields, each judged by the API's field; the whole input is checked again on submit. */
const labelsForm = z.object({
  add: labelAssignmentsText(bulkUpdateLabelsInput.shape.add),
  remove: labelKeysText(bulkUpdateLabelsInput.shape.remove),
});

/** Add/remove labels on the selected rows, or on every node the current selector matches. */
export function BulkLabels(props: { selectedIds: string[]; selector: string; onDone: () => void }) {
  const trpc = useTRPC();
  const [open, setOpen] = useState(false);
  const form = useApiForm(labelsForm, { add: "", remove: "" });
  const formFeedback = useFormFeedback(form);
  const mutation = useMutation(
    trpc.node.bulkUpdateLabels.mutationOptions(
      formFeedback(trpc.node.pathFilter(), ({ updated }) => {
        toast.success(`${updated} node${updated === 1 ? "" : "s"} updated`);
        form.reset();
        setOpen(false);
        props.onDone();
      }),
    ),
  );
  const send = (target: { ids: string[] } | { selector: string }, values: z.output<typeof labelsForm>) => {
    // The API's whole-input rules (something to change, not both added and removed) before sending.
    const input = bulkUpdateLabelsInput.safeParse({ target, ...values });
    if (!input.success) {
      form.setError("root.server", { message: input.error.issues.map((i) => i.message).join("; ") });
      return;
    }
    mutation.mutate(input.data);
  };
  const count = props.selectedIds.length;

  return (
    <BulkActionPanel
      icon={<TagsIcon aria-hidden />}
      label="Edit labels"
      count={count}
      open={open}
      onOpenChange={setOpen}
      form={form}
      pending={mutation.isPending}
      onSubmit={(values) => send({ ids: props.selectedIds }, values)}
    >
      <TextField
        name="add"
        label="Add or change"
        accessibleName="Labels to add"
        placeholder="ring=1, owner=ops"
      />
      <TextField
        name="remove"
        label="Remove keys"
        accessibleName="Label keys to remove"
        placeholder="gpu, tmp"
      />
      <FormFooter
        label={`Apply to ${count} selected`}
        pendingLabel="Applying…"
        disabledReason={count === 0 ? "select rows first, or apply to the selector" : null}
      >
        <Button
          type="button"
          variant="outline"
          disabled={!props.selector || mutation.isPending}
          title="Every node the selector matches, loaded or not"
          onClick={form.handleSubmit((values) => send({ selector: props.selector }, values))}
        >
          Apply to all matching selector
        </Button>
      </FormFooter>
    </BulkActionPanel>
  );
}
