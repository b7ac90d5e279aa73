"use client";

import { CheckIcon, CopyIcon, KeyRoundIcon } from "lucide-react";
import { useState } from "react";
import { Alert } from "./ui/alert";
import { Button } from "./ui/button";

/** Copies text, saying so; a refused clipboard (no secure context) leaves the text selectable. */
export function CopyButton(props: { text: string; label?: string }) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);
  return (
    <>
      <Button
        type="button"
        variant="outline"
        size="sm"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(props.text);
            setCopied("yes");
          } catch {
            setCopied("failed");
          }
        }}
      >
        {copied === "yes" ? <CheckIcon aria-hidden /> : <CopyIcon aria-hidden />}
        {copied === "yes" ? "Copied" : (props.label ?? "Copy")}
      </Button>
      {copied === "failed" ? (
        <span role="status" className="text-xs text-muted-foreground">
          Copying was refused by the browser: select the text instead.
        </span>
      ) : null}
    </>
  );
}

/** A secret the server returns once (API key, token, password): shown with a copy button and a warning. */
export function CopyOnce(props: { label: string; secret: string; onDismiss: () => void }) {
  return (
    <Alert variant="warning" aria-label={props.label} role="region" className="grid gap-3">
      <p className="flex items-center gap-2 font-medium">
        <KeyRoundIcon aria-hidden className="size-4" />
        Copy this {props.label.replace(/^(?!API)\w/, (c) => c.toLowerCase())} now. It is shown only once and
        cannot be shown again; only a hash of it is stored.
      </p>
      <code data-testid="secret" className="block rounded-md border bg-card px-3 py-2 text-sm break-all">
        {props.secret}
      </code>
      <div className="flex flex-wrap items-center gap-2">
        <CopyButton text={props.secret} />
        <Button type="button" size="sm" onClick={props.onDismiss}>
          I have stored it
        </Button>
      </div>
    </Alert>
  );
}
