"use client";

import { useState } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { Button } from "~/components/ui/button";
import { Section } from "~/components/ui/card";

export interface PushActionChoice {
  token: string;
  title: string;
  detail: string;
  expiresAt: string | null;
  /** Why it cannot be done (expired, forged, used); null when it can. */
  problem: string | null;
}

/** One confirm button per action of the notification; each posts its token once. */
export function PushActionConfirm(props: { choices: PushActionChoice[] }) {
  const [outcome, setOutcome] = useState<Record<string, { ok: boolean; message: string }>>({});
  const [pending, setPending] = useState<string | null>(null);

  async function confirm(choice: PushActionChoice) {
    setPending(choice.token);
    try {
      const response = await fetch("/api/push/action", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token: choice.token }),
      });
      const body = (await response.json().catch(() => ({}))) as { message?: string; result?: string };
      setOutcome((was) => ({
        ...was,
        [choice.token]: response.ok
          ? { ok: true, message: `Done${body.result ? `: ${body.result}` : ""}.` }
          : { ok: false, message: body.message ?? `HTTP ${response.status}` },
      }));
    } finally {
      setPending(null);
    }
  }

  return (
    <div className="grid gap-3">
      {props.choices.map((choice) => {
        const done = outcome[choice.token];
        return (
          <Section key={choice.token} title={choice.title} description={choice.detail}>
            {choice.problem ? <ErrorNotice error={choice.problem} /> : null}
            {done ? (
              done.ok ? (
                <p role="status" className="text-sm">
                  {done.message}
                </p>
              ) : (
                <ErrorNotice error={done.message} />
              )
            ) : null}
            {!choice.problem && !done ? (
              <div>
                <Button onClick={() => confirm(choice)} disabled={pending !== null}>
                  {choice.title}
                </Button>
              </div>
            ) : null}
          </Section>
        );
      })}
    </div>
  );
}
