import { signIn } from "~/auth";
import { safeCallbackPath } from "~/auth/safe-redirect";

export const dynamic = "force-dynamic";

/** Starts the Keycloak authorization-code flow straight away (no intermediate page). */
export async function GET(request: Request) {
  const callbackUrl = new URL(request.url).searchParams.get("callbackUrl");
  // signIn() answers with a redirect to Keycloak's login page.
  await signIn("keycloak", { redirectTo: safeCallbackPath(callbackUrl) });
}
