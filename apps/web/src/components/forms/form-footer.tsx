"use client";

import { Loader2Icon } from "lucide-react";
import { useFormState } from "react-hook-form";
import { Button } from "../ui/button";
import { useSubmissionPending } from "./api-form";

/**
 * The end of every console form: the submit button (with what it is doing while pending), why it
 * is disabled for this person, and the server's answer when it refused. The reason is a hint
 * only; the server still decides (a page opened before a role change can submit, and then shows
 * the server's FORBIDDEN message). Pending comes from the ApiForm around it unless given.
 */
export function FormFooter(props: {
  label: string;
  pendingLabel: string;
  pending?: boolean;
  disabledReason?: string | null;
  children?: React.ReactNode;
}) {
  const { errors } = useFormState();
  const formPending = useSubmissionPending();
  const pending = props.pending ?? formPending;
  const problem = (errors.root as { server?: { message?: string } } | undefined)?.server?.message;
  return (
    <div className="flex flex-wrap items-center gap-x-3 gap-y-2 self-end">
      <Button type="submit" disabled={pending || Boolean(props.disabledReason)}>
        {pending ? <Loader2Icon aria-hidden className="animate-spin" /> : null}
        {pending ? props.pendingLabel : props.label}
      </Button>
      {props.children}
      {props.disabledReason ? (
        <span className="text-xs text-muted-foreground">Disabled: {props.disabledReason}</span>
      ) : null}
      {problem ? (
        <p role="alert" className="basis-full text-sm text-destructive">
          {problem}
        </p>
      ) : null}
    </div>
  );
}
