"use client";

import { ALERT_SEVERITIES } from "@edgefleet/alerts/policy";
import type { RouterOutputs } from "@edgefleet/api";
import { notificationPreferencesInput } from "@edgefleet/api/schemas";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { BellIcon, BellOffIcon } from "lucide-react";
import { useEffect, useState } from "react";
import { useActionFeedback } from "~/components/action-feedback";
import { ErrorNotice } from "~/components/error-notice";
import { ApiForm } from "~/components/forms/api-form";
import { CheckboxGroupField } from "~/components/forms/fields";
import { FormFooter } from "~/components/forms/form-footer";
import { showServerError, useApiForm } from "~/components/forms/use-api-form";
import { RelativeTime } from "~/components/relative-time";
import { Button } from "~/components/ui/button";
import { Section } from "~/components/ui/card";
import { toast } from "~/components/ui/sonner";
import { useTRPC } from "~/trpc/react";

type Preferences = NonNullable<RouterOutputs["push"]["preferences"]>;

/** What this browser can do about Web Push, as far as the page can tell. */
type BrowserState = "checking" | "unsupported" | "denied" | "subscribed" | "available";

function applicationServerKey(base64url: string): Uint8Array<ArrayBuffer> {
  const base64 = base64url.replace(/-/g, "+").replace(/_/g, "/");
  const raw = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

/**
 * This person's Web Push devices and which severities reach them by push and by e-mail
 * (/settings/notifications). Subscribing registers the console's service worker (public/sw.js),
 * asks the browser for a push subscription with this install's VAPID key and stores it.
 */
export function PushSettings(props: { vapidPublicKey: string | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const devices = useQuery(trpc.push.subscriptions.queryOptions());
  const preferences = useQuery(trpc.push.preferences.queryOptions());
  const [state, setState] = useState<BrowserState>("checking");

  useEffect(() => {
    if (!("serviceWorker" in navigator) || !("PushManager" in window) || !props.vapidPublicKey) {
      setState("unsupported");
      return;
    }
    if (Notification.permission === "denied") {
      setState("denied");
      return;
    }
    navigator.serviceWorker
      .getRegistration("/")
      .then((registration) => registration?.pushManager.getSubscription())
      .then((subscription) => setState(subscription ? "subscribed" : "available"))
      .catch(() => setState("available"));
  }, [props.vapidPublicKey]);

  const refresh = () => queryClient.invalidateQueries(trpc.push.subscriptions.queryFilter());
  const subscribe = useMutation(trpc.push.subscribe.mutationOptions({ onSuccess: refresh }));
  const unsubscribe = useMutation(trpc.push.unsubscribe.mutationOptions({ onSuccess: refresh }));

  async function turnOn() {
    try {
      if ((await Notification.requestPermission()) !== "granted") {
        setState("denied");
        return;
      }
      const registration = await navigator.serviceWorker.register("/sw.js", { scope: "/" });
      await navigator.serviceWorker.ready;
      const subscription = await registration.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: applicationServerKey(props.vapidPublicKey ?? ""),
      });
      const json = subscription.toJSON();
      await subscribe.mutateAsync({
        endpoint: json.endpoint ?? "",
        keys: { p256dh: json.keys?.p256dh ?? "", auth: json.keys?.auth ?? "" },
        userAgent: navigator.userAgent.slice(0, 200),
      });
      setState("subscribed");
      toast.success("Notifications are on for this device");
    } catch (error) {
      toast.error(
        `Could not turn notifications on: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  return (
    <div className="grid gap-4">
      <Section
        title="This device"
        description="Alerts arrive as notifications with buttons: pause a rollout, approve its next batch, silence for an hour."
        actions={
          state === "available" ? (
            <Button onClick={turnOn} disabled={subscribe.isPending}>
              <BellIcon aria-hidden /> Turn on notifications
            </Button>
          ) : null
        }
      >
        <p className="text-sm" data-testid="push-state">
          {state === "checking" && "Checking this browser…"}
          {state === "unsupported" &&
            (props.vapidPublicKey
              ? "This browser cannot receive Web Push (on iPhone: add the console to the home screen first)."
              : "Web Push is not configured on this console.")}
          {state === "denied" && "Notifications are blocked for this site in the browser's settings."}
          {state === "subscribed" && "Notifications are on for this device."}
          {state === "available" && "Notifications are off for this device."}
        </p>
      </Section>

      <Section
        title="My devices"
        description="Every browser where you turned notifications on, in this organization."
      >
        {devices.error ? <ErrorNotice error={devices.error} /> : null}
        <ul className="grid gap-2" aria-label="My devices">
          {(devices.data ?? []).map((device) => (
            <li key={device.id} className="flex flex-wrap items-center justify-between gap-2 text-sm">
              <span>
                <span className="font-medium">{device.pushService}</span>{" "}
                <span className="text-muted-foreground">{device.userAgent ?? ""}</span>
                {device.enabled ? null : (
                  <span className="text-destructive"> — off: {device.disabledReason}</span>
                )}
                <span className="block text-muted-foreground">
                  last delivered <RelativeTime date={device.lastSuccessAt} never="never" />
                </span>
              </span>
              <Button
                variant="outline"
                size="sm"
                onClick={() => unsubscribe.mutate({ id: device.id })}
                disabled={unsubscribe.isPending}
              >
                <BellOffIcon aria-hidden /> Remove
              </Button>
            </li>
          ))}
          {devices.data?.length === 0 ? (
            <li className="text-sm text-muted-foreground">No devices yet.</li>
          ) : null}
        </ul>
      </Section>

      {preferences.data ? (
        <PreferencesForm key={JSON.stringify(preferences.data)} initial={preferences.data} />
      ) : null}
    </div>
  );
}

const SEVERITY_OPTIONS = ALERT_SEVERITIES.map((severity) => ({ value: severity, label: severity }));

function PreferencesForm(props: { initial: Preferences }) {
  const trpc = useTRPC();
  const form = useApiForm(notificationPreferencesInput, {
    pushSeverities: props.initial.pushSeverities,
    emailSeverities: props.initial.emailSeverities,
  });
  const feedback = useActionFeedback();
  const saved = feedback(trpc.push.preferences.queryFilter(), () => "Notification preferences saved");
  const save = useMutation(
    trpc.push.updatePreferences.mutationOptions({
      onSuccess: saved.onSuccess,
      onError: (error) => showServerError(form, error),
    }),
  );
  return (
    <Section
      title="What reaches me"
      description={`Per severity, by push to my devices and by e-mail to ${props.initial.email}.`}
    >
      <ApiForm form={form} label="What reaches me" mutation={save}>
        <CheckboxGroupField name="pushSeverities" legend="By push" options={SEVERITY_OPTIONS} />
        <CheckboxGroupField name="emailSeverities" legend="By e-mail" options={SEVERITY_OPTIONS} />
        <FormFooter label="Save preferences" pendingLabel="Saving…" />
      </ApiForm>
    </Section>
  );
}
