import { CircleAlertIcon } from "lucide-react";
import { Alert } from "./ui/alert";

/**
 * A failed load or action: what happened (the server's words) and what to do next. Tenancy and
 * role refusals tell the reader to switch organization or ask an admin; anything else to retry.
 */
export function ErrorNotice(props: { error: { message: string } | string; className?: string }) {
  const message = typeof props.error === "string" ? props.error : props.error.message;
  return (
    <Alert variant="destructive" role="alert" className={props.className}>
      <CircleAlertIcon aria-hidden />
      {message}
      <span className="mt-1 block text-xs text-muted-foreground">{nextStep(message)}</span>
    </Alert>
  );
}

function nextStep(message: string): string {
  if (/needs the \w+ role/.test(message)) return "Ask an owner or admin of this organization for that role.";
  if (/not a member|not found/i.test(message))
    return "Check the address, or switch organization in the header.";
  if (/sign in/i.test(message)) return "Sign in again: your session may have ended.";
  if (/fetch|network|unavailable|timed? ?out/i.test(message))
    return "Check your connection; the page retries on its own.";
  return "Nothing was changed. Try again; if it keeps failing, the audit log and server logs say more.";
}
