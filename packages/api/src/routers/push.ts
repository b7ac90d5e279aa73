import { TRPCError } from "@trpc/server";
import { z } from "zod";
import {
  getNotificationPreferences,
  listOwnPushSubscriptions,
  notificationPreferencesInput,
  notificationPreferencesOutput,
  pushSubscriptionIdInput,
  pushSubscriptionOutput,
  subscribePush,
  subscribePushInput,
  unsubscribePush,
  updateNotificationPreferences,
} from "../domain/push-subscriptions";
import { createTRPCRouter, organizationProcedure } from "../trpc";

/**
 * A person's Web Push devices and notification preferences in the active organization (issue 12).
 * Every member may manage their own (viewer and up); nobody sees another person's. These are
 * tRPC only: the REST API authenticates API keys, which are not people and have no devices.
 * The notifications' action buttons post to the console's /api/push/action (domain/push-actions).
 */
export const pushRouter = createTRPCRouter({
  subscriptions: organizationProcedure
    .output(z.array(pushSubscriptionOutput))
    .query(({ ctx }) =>
      ctx.actor.type === "user" ? listOwnPushSubscriptions(ctx.tenantDb, ctx.actor.id) : [],
    ),

  subscribe: organizationProcedure
    .meta({ role: "viewer", audit: { action: "pushSubscription.create", target: "pushSubscription" } })
    .input(subscribePushInput)
    .output(pushSubscriptionOutput)
    .mutation(async ({ ctx, input }) => {
      if (ctx.actor.type !== "user") return notAPerson();
      const created = await subscribePush(ctx.tenantDb, ctx.organization.id, ctx.actor.id, input);
      ctx.audit.record({ targetId: created.id, before: null, after: created });
      return created;
    }),

  unsubscribe: organizationProcedure
    .meta({ role: "viewer", audit: { action: "pushSubscription.delete", target: "pushSubscription" } })
    .input(pushSubscriptionIdInput)
    .output(pushSubscriptionOutput)
    .mutation(async ({ ctx, input }) => {
      if (ctx.actor.type !== "user") return notAPerson();
      const before = await unsubscribePush(ctx.tenantDb, ctx.actor.id, input.id);
      ctx.audit.record({ targetId: input.id, before, after: null });
      return before;
    }),

  /** null for an API key (it has no preferences). */
  preferences: organizationProcedure
    .output(notificationPreferencesOutput.nullable())
    .query(({ ctx }) =>
      ctx.actor.type === "user" ? getNotificationPreferences(ctx.tenantDb, ctx.actor.id) : null,
    ),

  updatePreferences: organizationProcedure
    .meta({ role: "viewer", audit: { action: "notificationPreferences.update", target: "membership" } })
    .input(notificationPreferencesInput)
    .output(notificationPreferencesOutput)
    .mutation(async ({ ctx, input }) => {
      if (ctx.actor.type !== "user") return notAPerson();
      const { before, after } = await updateNotificationPreferences(
        ctx.db,
        ctx.tenantDb,
        ctx.organization.id,
        ctx.actor.id,
        input,
      );
      ctx.audit.record({ targetId: ctx.actor.id, before, after });
      return after;
    }),
});

function notAPerson(): never {
  throw new TRPCError({
    code: "FORBIDDEN",
    message: "Web Push and notification preferences belong to people, not API keys",
  });
}
