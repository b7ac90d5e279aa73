"use client";

import { useState } from "react";
import styles from "./enrollment.module.css";

/** The one-line agent install command of a new token, with a copy button (shown with the token, once). */
export function InstallCommand(props: { command: string }) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);
  return (
    <div className={styles.command}>
      <strong>Run on the node</strong> (Linux with Node 20, the agent at /opt/edgefleet/edgefleet-agent.mjs):
      <pre data-testid="install-command">{props.command}</pre>
      <button
        type="button"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(props.command);
            setCopied("yes");
          } catch {
            // No clipboard permission outside a secure context: the text stays selectable.
            setCopied("failed");
          }
        }}
      >
        {copied === "yes" ? "Copied" : "Copy command"}
      </button>
      {copied === "failed" ? (
        <span> Copying was refused by the browser: select the text instead.</span>
      ) : null}
    </div>
  );
}
