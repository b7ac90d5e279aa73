import { previewPushAction } from "@edgefleet/api";
import { TRPCError } from "@trpc/server";
import { Brand } from "~/components/shell/brand";
import { env } from "~/env";
import { db } from "~/server/db";
import { type PushActionChoice, PushActionConfirm } from "./push-action-confirm";

export const dynamic = "force-dynamic";

/**
 * /alerts/action?token=…(&token=…): where a tap on a Web Push notification lands when the
 * platform shows no buttons (iOS, Firefox), or when a button's action was refused. The token
 * authenticates; nothing happens until the person confirms here.
 */
export default async function PushActionPage(props: {
  searchParams: Promise<Record<string, string | string[]>>;
}) {
  const raw = (await props.searchParams).token;
  const tokens = (Array.isArray(raw) ? raw : raw ? [raw] : []).slice(0, 4);
  const choices: PushActionChoice[] = await Promise.all(
    tokens.map(async (token) => {
      try {
        const preview = await previewPushAction(
          db,
          { secret: env.EDGEFLEET_PUSH_ACTION_SECRET ?? null, mimirUrl: env.MIMIR_URL },
          token,
        );
        return {
          token,
          title: preview.title,
          detail: preview.rolloutId ? `rollout ${preview.rolloutId}` : (preview.alertName ?? "this alert"),
          expiresAt: preview.expiresAt.toISOString(),
          problem: preview.used ? "already done from another tap" : null,
        };
      } catch (error) {
        return {
          token,
          title: "Action",
          detail: "",
          expiresAt: null,
          problem: error instanceof TRPCError ? error.message : "this link cannot be checked now",
        };
      }
    }),
  );
  return (
    <main className="mx-auto grid max-w-md gap-4 p-6">
      <Brand />
      <h1 className="text-2xl font-semibold tracking-tight">Act on an alert</h1>
      {choices.length === 0 ? (
        <p className="text-sm text-muted-foreground">
          This link carries no action. Open the alert in the console instead.
        </p>
      ) : (
        <PushActionConfirm choices={choices} />
      )}
    </main>
  );
}
