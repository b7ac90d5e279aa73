"use client";

import { useState } from "react";
import styles from "./confirm-button.module.css";

/**
 * A destructive action in two steps: the first click asks "Sure?" in place (no modal, so it works
 * the same on a phone), the second does it. `disabledReason` disables it and says why.
 */
export function ConfirmButton(props: {
  label: string;
  /** Shown next to the confirming button, e.g. "Remove carol@acme.example?" */
  question: string;
  confirmLabel?: string;
  onConfirm: () => void;
  pending?: boolean;
  disabledReason?: string | null;
}) {
  const [asking, setAsking] = useState(false);
  if (asking) {
    return (
      <span className={styles.confirm}>
        <span>{props.question}</span>
        <button
          type="button"
          className={styles.danger}
          disabled={props.pending}
          onClick={() => {
            setAsking(false);
            props.onConfirm();
          }}
        >
          {props.confirmLabel ?? `Yes, ${props.label.toLowerCase()}`}
        </button>
        <button type="button" onClick={() => setAsking(false)}>
          Cancel
        </button>
      </span>
    );
  }
  return (
    <button
      type="button"
      disabled={Boolean(props.disabledReason) || props.pending}
      title={props.disabledReason ?? undefined}
      onClick={() => setAsking(true)}
    >
      {props.label}
    </button>
  );
}
