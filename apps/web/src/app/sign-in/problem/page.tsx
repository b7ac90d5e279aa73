import { CircleAlertIcon } from "lucide-react";
import Link from "next/link";
import { Brand } from "~/components/shell/brand";
import { Button } from "~/components/ui/button";
import { Card } from "~/components/ui/card";

export const dynamic = "force-dynamic";

/** Auth.js's error codes (`?error=`), said plainly, with what to do next. */
const PROBLEMS: Record<string, { what: string; next: string }> = {
  AccessDenied: {
    what: "Keycloak did not let this account sign in to the console.",
    next: "Ask an owner of your organization to invite you, then sign in again.",
  },
  Verification: {
    what: "The sign-in link has expired or was used already.",
    next: "Start signing in again.",
  },
  Configuration: {
    what: "The console cannot reach or trust its identity provider (Keycloak).",
    next: "Try again in a minute; if it persists, an operator should check the AUTH_KEYCLOAK_* settings and that Keycloak is up.",
  },
};
const UNKNOWN = { what: "Signing in did not complete.", next: "Start signing in again." };

/**
 * Where a failed sign-in lands (Auth.js `pages.error`); the sign-in itself goes straight to
 * Keycloak's form (`/sign-in`).
 */
export default async function SignInProblemPage(props: {
  searchParams: Promise<{ error?: string | string[] }>;
}) {
  const { error } = await props.searchParams;
  const problem = (typeof error === "string" && PROBLEMS[error]) || UNKNOWN;
  return (
    <main className="grid min-h-dvh place-items-center p-4">
      <Card className="w-full max-w-md gap-5 p-6">
        <Brand />
        <div className="grid gap-2">
          <h1 className="flex items-center gap-2 text-xl font-semibold">
            <CircleAlertIcon aria-hidden className="size-5 text-destructive" />
            Could not sign you in
          </h1>
          <p data-testid="sign-in-problem">{problem.what}</p>
          <p className="text-sm text-muted-foreground">{problem.next}</p>
        </div>
        <Button asChild className="justify-self-start">
          <Link href="/sign-in?callbackUrl=%2Ffleet">Sign in again</Link>
        </Button>
      </Card>
    </main>
  );
}
