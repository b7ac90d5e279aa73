"use client";

import { useState } from "react";
import styles from "./copy-once.module.css";

/** A secret the server returns once (API key, token): shown with a copy button and a warning. */
export function CopyOnce(props: { label: string; secret: string; onDismiss: () => void }) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);
  return (
    <section className={styles.box} aria-label={props.label}>
      <p className={styles.warning}>
        Copy this {props.label.toLowerCase()} now. It is shown only once and cannot be shown again; only a
        hash of it is stored.
      </p>
      <div className={styles.row}>
        <code className={styles.secret} data-testid="secret">
          {props.secret}
        </code>
        <button
          type="button"
          onClick={async () => {
            try {
              await navigator.clipboard.writeText(props.secret);
              setCopied("yes");
            } catch {
              // Clipboard access needs a secure context or a permission: the text stays selectable.
              setCopied("failed");
            }
          }}
        >
          {copied === "yes" ? "Copied" : "Copy"}
        </button>
        <button type="button" onClick={props.onDismiss}>
          I have stored it
        </button>
      </div>
      {copied === "failed" ? (
        <p className={styles.hint}>Copying was refused by the browser: select the text instead.</p>
      ) : null}
    </section>
  );
}
