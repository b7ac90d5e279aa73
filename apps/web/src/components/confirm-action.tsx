"use client";

import { useState } from "react";
import { ActionButton } from "./action-button";
import {
  AlertDialog,
  AlertDialogAction,
  AlertDialogCancel,
  AlertDialogContent,
  AlertDialogDescription,
  AlertDialogFooter,
  AlertDialogHeader,
  AlertDialogTitle,
  AlertDialogTrigger,
} from "./ui/alert-dialog";
import type { ButtonProps } from "./ui/button";

/**
 * The one confirmation for destructive actions: a button that opens an alert dialog saying what
 * will happen, with Cancel focused first. `disabledReason` disables the button and says why (the
 * server still decides).
 */
export function ConfirmAction(props: {
  label: string;
  /** Dialog title, e.g. "Remove carol@acme.example?" */
  question: string;
  /** What happens, in one or two sentences. */
  consequence?: string;
  confirmLabel?: string;
  onConfirm: () => void;
  pending?: boolean;
  disabledReason?: string | null;
  size?: ButtonProps["size"];
  variant?: ButtonProps["variant"];
}) {
  const [open, setOpen] = useState(false);
  const trigger = (
    <ActionButton
      variant={props.variant}
      size={props.size}
      pending={props.pending}
      disabledReason={props.disabledReason}
    >
      {props.label}
    </ActionButton>
  );
  return (
    <AlertDialog open={open} onOpenChange={setOpen}>
      {/* A disabled trigger opens nothing; the button itself shows why. */}
      {props.disabledReason ? trigger : <AlertDialogTrigger asChild>{trigger}</AlertDialogTrigger>}
      <AlertDialogContent>
        <AlertDialogHeader>
          <AlertDialogTitle>{props.question}</AlertDialogTitle>
          <AlertDialogDescription>{props.consequence ?? "This cannot be undone."}</AlertDialogDescription>
        </AlertDialogHeader>
        <AlertDialogFooter>
          <AlertDialogCancel>Cancel</AlertDialogCancel>
          <AlertDialogAction destructive onClick={props.onConfirm}>
            {props.confirmLabel ?? `Yes, ${props.label.toLowerCase()}`}
          </AlertDialogAction>
        </AlertDialogFooter>
      </AlertDialogContent>
    </AlertDialog>
  );
}
