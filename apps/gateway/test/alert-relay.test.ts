import { describe, expect, it } from "vitest";
import { webhookBody } from "../src/alerts/delivery-worker.js";
import { idempotencyKey, type RelayedAlert, severityOf, wantedByPerson } from "../src/alerts/relay.js";

const alert: RelayedAlert = {
  status: "firing",
  labels: { alertname: "EdgefleetCpuHigh", severity: "critical", node: "n1" },
  annotations: { summary: "CPU of node n1 at 95%", console_url: "https://console.example/nodes/n1" },
  startsAt: "2026-11-25T06:00:00Z",
  endsAt: "0001-01-01T00:00:00Z",
  fingerprint: "a1b2c3",
};

describe("relay", () => {
  it("one alert state change has one idempotency key, whatever Alertmanager re-sends", () => {
    expect(idempotencyKey(alert)).toBe(
      idempotencyKey({ ...alert, annotations: { summary: "changed text" } }),
    );
    expect(idempotencyKey({ ...alert, status: "resolved" })).not.toBe(idempotencyKey(alert));
    // The same labels firing again later is a new episode.
    expect(idempotencyKey({ ...alert, startsAt: "2026-11-25T07:00:00Z" })).not.toBe(idempotencyKey(alert));
  });

  it("reads the severity label, and treats a missing or unknown one as warning", () => {
    expect(severityOf({ severity: "critical" })).toBe("critical");
    expect(severityOf({})).toBe("warning");
    expect(severityOf({ severity: "page-everyone" })).toBe("warning");
  });

  it("the webhook body names the event, the organization and the link", () => {
    const body = JSON.parse(
      webhookBody({ id: "n-1", organization_id: "org-1", alert_status: "firing", alert }),
    );
    expect(body).toMatchObject({
      id: "n-1",
      type: "alert.firing",
      organizationId: "org-1",
      alert: {
        name: "EdgefleetCpuHigh",
        severity: "critical",
        consoleUrl: "https://console.example/nodes/n1",
      },
    });
  });

  it("a person's own channel gets the severities they chose for its medium, and none after they left", () => {
    const membership = {
      pushSeverities: ["critical" as const],
      emailSeverities: ["critical" as const, "warning" as const],
    };
    const push = { kind: "webpush", userId: "u1", membership };
    const mail = { kind: "email", userId: "u1", membership };
    expect(wantedByPerson(push, "critical")).toBe(true);
    expect(wantedByPerson(push, "warning")).toBe(false);
    expect(wantedByPerson(mail, "warning")).toBe(true);
    expect(wantedByPerson({ ...push, membership: null }, "critical")).toBe(false);
    // Organization channels (no person) are filtered by their minSeverity only.
    expect(wantedByPerson({ kind: "webhook", userId: null, membership: null }, "info")).toBe(true);
  });
});
