/**
 * Concurrency limits for node commands (issue 13, "Limits"): a script cannot flood a site's link
 * or a node. Pure bookkeeping, no I/O: `admit` either takes a slot or says why not.
 *
 * Held per gateway replica: with N replicas an organization can have up to N × perOrganization
 * commands in flight (each replica still holds a node to perNode, and the console's API reaches
 * one replica per call). A fleet-wide count would need shared state (Postgres); not yet needed.
 */
export interface CommandLimitsConfig {
  /** Commands in flight per organization (default 32). */
  perOrganization: number;
  /** Commands in flight per node (default 1: a node works on one operator command at a time). */
  perNode: number;
}

export const DEFAULT_COMMAND_LIMITS: CommandLimitsConfig = { perOrganization: 32, perNode: 1 };
/** Live log sessions: a node serves 4 at most (AGENT_MAX_LOG_SESSIONS), 2 of them to one gateway replica. */
export const DEFAULT_LOG_LIMITS: CommandLimitsConfig = { perOrganization: 16, perNode: 2 };
/** Probes fill a link on purpose: one per node, few per organization (sites share uplinks). */
export const DEFAULT_PROBE_LIMITS: CommandLimitsConfig = { perOrganization: 4, perNode: 1 };

export type Admission = { ok: true; release: () => void } | { ok: false; why: string };

export class CommandLimits {
  private readonly byOrganization = new Map<string, number>();
  private readonly byNode = new Map<string, number>();

  constructor(
    private readonly config: CommandLimitsConfig = DEFAULT_COMMAND_LIMITS,
    /** What is counted, as refusals say it: "command", "log session", "probe". */
    private readonly noun = "command",
  ) {}

  admit(organizationId: string, nodeId: string): Admission {
    const organization = this.byOrganization.get(organizationId) ?? 0;
    const node = this.byNode.get(nodeId) ?? 0;
    if (node >= this.config.perNode) {
      return {
        ok: false,
        why: `the node already has ${node} ${this.plural(node)} in flight (at most ${this.config.perNode} at a time); try again when ${node === 1 ? "it finishes" : "one finishes"}`,
      };
    }
    if (organization >= this.config.perOrganization) {
      return {
        ok: false,
        why: `the organization already has ${organization} ${this.plural(organization)} in flight (at most ${this.config.perOrganization}); try again shortly`,
      };
    }
    this.byOrganization.set(organizationId, organization + 1);
    this.byNode.set(nodeId, node + 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        decrement(this.byOrganization, organizationId);
        decrement(this.byNode, nodeId);
      },
    };
  }

  private plural(count: number): string {
    return count === 1 ? this.noun : `${this.noun}s`;
  }

  inFlight(organizationId: string): number {
    return this.byOrganization.get(organizationId) ?? 0;
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const next = (counts.get(key) ?? 1) - 1;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
