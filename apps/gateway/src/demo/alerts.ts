import type { AlertPolicySpec, AlertSeverity } from "@edgefleet/alerts";
import type { Db } from "@edgefleet/db";

/**
 * The demo's alerting (`./edgefleet up`, live fleet): a few policies of the demo organization that
 * fire on their own, and an e-mail channel to the demo user, whose mail the stack's SMTP server
 * (mailpit) shows. Made once, by name; a person's later changes are left alone.
 */
export interface DemoPolicy {
  name: string;
  severity: AlertSeverity;
  spec: AlertPolicySpec;
}

/** Both demo organizations, each mailing its owner (Globex's rollout is the one that waits for approval). */
export const DEMO_ALERT_RECIPIENTS = [
  { organization: "acme", mail: "alice@acme.example" },
  { organization: "globex", mail: "bob@globex.example" },
];

export const DEMO_POLICIES: DemoPolicy[] = [
  // The demo rollout that stops for an approval after its first batch raises this one.
  { name: "Rollout waiting for approval", severity: "warning", spec: { kind: "rollout_paused" } },
  // Fires for any demo node whose agent is not running (stop one to see it: edgefleet-agent is a process per site).
  { name: "Node offline for 2 minutes", severity: "critical", spec: { kind: "node_offline", forMinutes: 2 } },
  // Always true while agents report: shows the whole path (ruler → Alertmanager → relay → mail) at once.
  {
    name: "Demo: canary nodes reporting",
    severity: "info",
    spec: { kind: "promql", expr: 'count(edgefleet_node_info{label_tier="canary"}) > 0', forMinutes: 0 },
  },
];

export async function setUpDemoAlerts(db: Db): Promise<{ created: number }> {
  let created = 0;
  for (const recipient of DEMO_ALERT_RECIPIENTS) created += await setUpOrganization(db, recipient);
  return { created };
}

async function setUpOrganization(db: Db, recipient: { organization: string; mail: string }): Promise<number> {
  const organization = await db.organization.findUnique({ where: { slug: recipient.organization } });
  if (!organization) return 0;
  const organizationId = organization.id;
  let created = 0;
  await db.$transaction(async (tx) => {
    for (const policy of DEMO_POLICIES) {
      const exists = await tx.alertPolicy.findFirst({ where: { organizationId, name: policy.name } });
      if (exists) continue;
      await tx.alertPolicy.create({
        data: {
          organizationId,
          name: policy.name,
          kind: policy.spec.kind,
          severity: policy.severity,
          spec: policy.spec,
        },
      });
      created++;
    }
    const channel = await tx.alertChannel.findFirst({ where: { organizationId, name: "Demo mail" } });
    if (!channel) {
      await tx.alertChannel.create({
        data: {
          organizationId,
          kind: "email",
          name: "Demo mail",
          target: recipient.mail,
          minSeverity: "info",
        },
      });
      created++;
    }
    // The gateway's reconciler applies policy changes when the revision moves.
    if (created > 0) {
      await tx.alertingState.upsert({
        where: { organizationId },
        create: { organizationId, revision: 1 },
        update: { revision: { increment: 1 } },
      });
    }
  });
  return created;
}
