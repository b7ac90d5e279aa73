import { z } from "zod";
import {
  alertChannelIdInput,
  alertChannelOutput,
  alertChannelWithSecretOutput,
  alertDeliveriesInput,
  alertDeliveryOutput,
  createAlertChannel,
  createAlertChannelInput,
  deleteAlertChannel,
  listAlertChannels,
  listAlertDeliveries,
  rotateWebhookSecret,
  updateAlertChannel,
  updateAlertChannelInput,
} from "../domain/alert-channels";
import {
  alertHistory,
  alertHistoryInput,
  alertHistoryOutput,
  firingAlertOutput,
  firingAlerts,
} from "../domain/alert-firing";
import {
  alertingStatus,
  alertingStatusOutput,
  alertPolicyIdInput,
  alertPolicyOutput,
  createAlertPolicy,
  createAlertPolicyInput,
  deleteAlertPolicy,
  getAlertPolicy,
  listAlertPolicies,
  mimirPromqlChecker,
  updateAlertPolicy,
  updateAlertPolicyInput,
} from "../domain/alert-policies";
import {
  alertSilenceIdInput,
  alertSilenceOutput,
  createAlertSilence,
  createAlertSilenceInput,
  expireAlertSilence,
  listAlertSilences,
} from "../domain/alert-silences";
import { AlertmanagerApi } from "../domain/alertmanager-api";
import {
  listQuietHours,
  setQuietHours,
  setQuietHoursInput,
  siteQuietHoursOutput,
} from "../domain/quiet-hours";
import { createTRPCRouter, organizationProcedure } from "../trpc";

/** The caller's organization's own Alertmanager: the tenant is always the organization. */
const alertmanagerOf = (ctx: { mimirUrl: string | null; organization: { id: string } }) =>
  new AlertmanagerApi(ctx.mimirUrl, ctx.organization.id);

const tags = ["Alerts"];

/** Alert policies (operators define what wakes them) and channels (admins: they leave the platform). */
export const alertRouter = createTRPCRouter({
  policies: organizationProcedure
    .meta({ openapi: { method: "GET", path: "/alert-policies", tags, summary: "List alert policies" } })
    .output(z.array(alertPolicyOutput))
    .query(({ ctx }) => listAlertPolicies(ctx.tenantDb)),

  policy: organizationProcedure
    .meta({ openapi: { method: "GET", path: "/alert-policies/{id}", tags, summary: "An alert policy" } })
    .input(alertPolicyIdInput)
    .output(alertPolicyOutput)
    .query(({ ctx, input }) => getAlertPolicy(ctx.tenantDb, input.id)),

  /** PromQL is parsed by Mimir first: one that does not parse is refused, naming `spec.expr`. */
  createPolicy: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "alertPolicy.create", target: "alertPolicy" },
      openapi: { method: "POST", path: "/alert-policies", tags, summary: "Create an alert policy" },
    })
    .input(createAlertPolicyInput)
    .output(alertPolicyOutput)
    .mutation(({ ctx, input }) =>
      createAlertPolicy(
        ctx.tenantDb,
        ctx.organization.id,
        mimirPromqlChecker(ctx.mimirUrl, ctx.organization.id),
        input,
        ctx.actor.type === "user" ? ctx.actor.id : null,
      ),
    ),

  updatePolicy: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "alertPolicy.update", target: "alertPolicy" },
      openapi: { method: "PATCH", path: "/alert-policies/{id}", tags, summary: "Change an alert policy" },
    })
    .input(updateAlertPolicyInput)
    .output(alertPolicyOutput)
    .mutation(async ({ ctx, input }) => {
      const { before, after } = await updateAlertPolicy(
        ctx.tenantDb,
        ctx.organization.id,
        mimirPromqlChecker(ctx.mimirUrl, ctx.organization.id),
        input,
      );
      ctx.audit.record({ targetId: input.id, before, after });
      return after;
    }),

  deletePolicy: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "alertPolicy.delete", target: "alertPolicy" },
      openapi: { method: "DELETE", path: "/alert-policies/{id}", tags, summary: "Delete an alert policy" },
    })
    .input(alertPolicyIdInput)
    .output(alertPolicyOutput)
    .mutation(async ({ ctx, input }) => {
      const before = await deleteAlertPolicy(ctx.tenantDb, ctx.organization.id, input.id);
      ctx.audit.record({ targetId: input.id, before, after: null });
      return before;
    }),

  /** Whether Mimir's rules and Alertmanager config match the policies, and the last failure. */
  status: organizationProcedure
    .meta({ openapi: { method: "GET", path: "/alerting/status", tags, summary: "Alerting sync status" } })
    .output(alertingStatusOutput)
    .query(({ ctx }) => alertingStatus(ctx.tenantDb)),

  channels: organizationProcedure
    .meta({ openapi: { method: "GET", path: "/alert-channels", tags, summary: "List alert channels" } })
    .output(z.array(alertChannelOutput))
    .query(({ ctx }) => listAlertChannels(ctx.tenantDb)),

  /** A webhook's signing secret is in this response only (and in a rotation's). */
  createChannel: organizationProcedure
    .meta({
      role: "admin",
      audit: { action: "alertChannel.create", target: "alertChannel" },
      openapi: {
        method: "POST",
        path: "/alert-channels",
        tags,
        summary: "Create a webhook or e-mail channel",
      },
    })
    .input(createAlertChannelInput)
    .output(alertChannelWithSecretOutput)
    .mutation(async ({ ctx, input }) => {
      const created = await createAlertChannel(ctx.tenantDb, ctx.organization.id, input);
      const { secret: _secret, ...after } = created;
      ctx.audit.record({ targetId: created.id, before: null, after });
      return created;
    }),

  updateChannel: organizationProcedure
    .meta({
      role: "admin",
      audit: { action: "alertChannel.update", target: "alertChannel" },
      openapi: {
        method: "PATCH",
        path: "/alert-channels/{id}",
        tags,
        summary: "Rename, filter or re-enable a channel",
      },
    })
    .input(updateAlertChannelInput)
    .output(alertChannelOutput)
    .mutation(async ({ ctx, input }) => {
      const { before, after } = await updateAlertChannel(ctx.tenantDb, input);
      ctx.audit.record({ targetId: input.id, before, after });
      return after;
    }),

  rotateChannelSecret: organizationProcedure
    .meta({
      role: "admin",
      audit: { action: "alertChannel.rotateSecret", target: "alertChannel" },
      openapi: {
        method: "POST",
        path: "/alert-channels/{id}/rotate-secret",
        tags,
        summary: "New webhook signing secret (the previous one signs too for a day)",
      },
    })
    .input(alertChannelIdInput)
    .output(alertChannelWithSecretOutput)
    .mutation(async ({ ctx, input }) => {
      const rotated = await rotateWebhookSecret(ctx.tenantDb, input.id);
      const { secret: _secret, ...after } = rotated;
      ctx.audit.record({ targetId: input.id, before: null, after: { ...after, rotated: "signing secret" } });
      return rotated;
    }),

  deleteChannel: organizationProcedure
    .meta({
      role: "admin",
      audit: { action: "alertChannel.delete", target: "alertChannel" },
      openapi: { method: "DELETE", path: "/alert-channels/{id}", tags, summary: "Delete an alert channel" },
    })
    .input(alertChannelIdInput)
    .output(alertChannelOutput)
    .mutation(async ({ ctx, input }) => {
      const before = await deleteAlertChannel(ctx.tenantDb, input.id);
      ctx.audit.record({ targetId: input.id, before, after: null });
      return before;
    }),

  deliveries: organizationProcedure
    .meta({
      role: "admin",
      openapi: { method: "GET", path: "/alert-deliveries", tags, summary: "The relay's delivery log" },
    })
    .input(alertDeliveriesInput)
    .output(z.array(alertDeliveryOutput))
    .query(({ ctx, input }) => listAlertDeliveries(ctx.tenantDb, input)),

  /** Alerts firing now (also silenced, inhibited or muted ones), from the organization's Alertmanager. */
  firing: organizationProcedure
    .meta({ openapi: { method: "GET", path: "/alerts/firing", tags, summary: "Alerts firing now" } })
    .output(z.array(firingAlertOutput))
    .query(({ ctx }) => firingAlerts(ctx.tenantDb, alertmanagerOf(ctx))),

  /** Notifications sent (or being sent), newest first; delivered ones are kept for the gateway's retention. */
  history: organizationProcedure
    .meta({
      openapi: { method: "GET", path: "/alerts/history", tags, summary: "Alert notification history" },
    })
    .input(alertHistoryInput)
    .output(z.array(alertHistoryOutput))
    .query(({ ctx, input }) => alertHistory(ctx.tenantDb, input)),

  silences: organizationProcedure
    .meta({ openapi: { method: "GET", path: "/alert-silences", tags, summary: "List silences" } })
    .output(z.array(alertSilenceOutput))
    .query(({ ctx }) => listAlertSilences(ctx.tenantDb, alertmanagerOf(ctx))),

  /** Holds back the alerts of one site or one node for a while (Alertmanager silence). */
  createSilence: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "alertSilence.create", target: "alertSilence" },
      openapi: { method: "POST", path: "/alert-silences", tags, summary: "Silence a site or a node" },
    })
    .input(createAlertSilenceInput)
    .output(alertSilenceOutput)
    .mutation(async ({ ctx, input }) => {
      const createdBy =
        ctx.actor.type === "user" ? (ctx.session?.email ?? ctx.actor.id) : `api key ${ctx.actor.id}`;
      const created = await createAlertSilence(ctx.tenantDb, alertmanagerOf(ctx), input, createdBy);
      ctx.audit.record({ targetId: created.id, before: null, after: created });
      return created;
    }),

  expireSilence: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "alertSilence.expire", target: "alertSilence" },
      openapi: { method: "DELETE", path: "/alert-silences/{id}", tags, summary: "Expire a silence now" },
    })
    .input(alertSilenceIdInput)
    .output(alertSilenceOutput)
    .mutation(async ({ ctx, input }) => {
      const { before, after } = await expireAlertSilence(ctx.tenantDb, alertmanagerOf(ctx), input.id);
      ctx.audit.record({ targetId: input.id, before, after });
      return after;
    }),

  quietHours: organizationProcedure
    .meta({
      openapi: { method: "GET", path: "/alert-quiet-hours", tags, summary: "Quiet hours of every site" },
    })
    .output(z.array(siteQuietHoursOutput))
    .query(({ ctx }) => listQuietHours(ctx.tenantDb)),

  /** Warning and info alerts of the site are held back daily in this span of its time zone. */
  setQuietHours: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "site.setQuietHours", target: "site" },
      openapi: {
        method: "PUT",
        path: "/alert-quiet-hours/{siteId}",
        tags,
        summary: "Set or clear a site's quiet hours",
      },
    })
    .input(setQuietHoursInput)
    .output(siteQuietHoursOutput)
    .mutation(async ({ ctx, input }) => {
      const { before, after } = await setQuietHours(ctx.tenantDb, ctx.organization.id, input);
      ctx.audit.record({ targetId: input.siteId, before, after });
      return after;
    }),
});
