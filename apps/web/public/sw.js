/*
 * The console's service worker: Web Push notifications with actions (docs/alerts.md, "Web Push").
 * A push carries the PushMessage of @edgefleet/alerts (push-actions.ts): title, body, tag, the
 * alert's console link and up to two actions, each with its own signed single-use token.
 *
 * What a tap does lives in self.handleNotificationAction, not in the event listener: a browser
 * test cannot click an OS notification, and a synthetic notificationclick is untrusted, so the
 * tests call this function itself (apps/web/e2e/push.spec.ts).
 */
const ACTION_ENDPOINT = "/api/push/action";
const CONFIRM_PAGE = "/alerts/action";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  let message = null;
  try {
    message = event.data ? event.data.json() : null;
  } catch {
    message = null;
  }
  if (message?.v !== 1) return;
  event.waitUntil(
    self.registration.showNotification(message.title, {
      body: message.body,
      tag: message.tag,
      icon: "/icons/icon-192.png",
      badge: "/icons/icon-192.png",
      // A critical alert stays until the person deals with it.
      requireInteraction: message.severity === "critical" && message.status === "firing",
      data: message,
      actions: (message.actions || []).map((a) => ({ action: a.action, title: a.title })),
    }),
  );
});

/** Where a tap without buttons goes: the confirm page for this alert's actions, else the alert. */
function confirmUrl(message) {
  if (!message.actions || message.actions.length === 0) return message.url || "/fleet";
  const query = message.actions.map((a) => `token=${encodeURIComponent(a.token)}`).join("&");
  return `${CONFIRM_PAGE}?${query}`;
}

async function openOrFocus(url) {
  const target = new URL(url, self.location.origin).href;
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const same = windows.find((client) => client.url === target);
  if (same) return same.focus();
  return self.clients.openWindow(target);
}

/**
 * One tap on a notification. `action` is the button's name ("pause_rollout", …), or "" for a tap
 * on the notification itself (and on platforms without buttons: iOS, Firefox), which opens the
 * confirm page. A button posts its token; the answer (done, or why not) becomes a notification.
 * Returns what happened, for the tests.
 */
async function handleNotificationAction(message, action) {
  const chosen = (message.actions || []).find((a) => a.action === action);
  if (!chosen) {
    const url = confirmUrl(message);
    await openOrFocus(url).catch(() => null);
    return { opened: url };
  }
  let status = 0;
  let result = {};
  try {
    const response = await fetch(ACTION_ENDPOINT, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: chosen.token }),
      credentials: "same-origin",
    });
    status = response.status;
    result = await response.json().catch(() => ({}));
  } catch (error) {
    result = { message: `the console could not be reached: ${error}` };
  }
  const ok = status >= 200 && status < 300;
  await self.registration.showNotification(ok ? `${chosen.title}: done` : `${chosen.title}: not done`, {
    body: ok ? message.title : result.message || `HTTP ${status}`,
    tag: `${message.tag}:action`,
    icon: "/icons/icon-192.png",
    // A failed action opens the confirm page, which says why and offers the other actions.
    data: { v: 1, tag: `${message.tag}:action`, url: ok ? message.url : confirmUrl(message), actions: [] },
  });
  return { ok, status, ...result };
}
self.handleNotificationAction = handleNotificationAction;

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  event.waitUntil(handleNotificationAction(event.notification.data || {}, event.action));
});
