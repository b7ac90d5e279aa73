import { createAlertPolicyInput } from "@edgefleet/api/schemas";
import { z } from "zod";

/** The presets the form offers, with the parameters each one takes (the API has the rules). */
export const POLICY_KINDS = {
  node_offline: { label: "Node offline", params: ["forMinutes"] },
  site_offline: { label: "Site offline", params: ["forMinutes"] },
  cpu_above: { label: "CPU above", params: ["thresholdPercent", "forMinutes"] },
  memory_above: { label: "Memory above", params: ["thresholdPercent", "forMinutes"] },
  disk_above: { label: "Disk above", params: ["thresholdPercent", "forMinutes"] },
  app_crash_looping: { label: "App crash-looping", params: ["restarts", "windowMinutes"] },
  rollout_paused: { label: "Rollout paused", params: [] },
  rollout_failed: { label: "Rollout failed", params: [] },
  rollout_finished: { label: "Rollout finished", params: [] },
  promql: { label: "PromQL", params: ["expr", "forMinutes"] },
} as const;
export type PolicyKind = keyof typeof POLICY_KINDS;
export type PolicyParam = (typeof POLICY_KINDS)[PolicyKind]["params"][number];

const NUMERIC: readonly PolicyParam[] = ["forMinutes", "thresholdPercent", "restarts", "windowMinutes"];

/**
 * The form holds every parameter as text; on submit the chosen kind's ones become the API's
 * `spec`, and the API's own schema judges the whole input. Its issues land on the form's fields
 * (`spec.forMinutes` on forMinutes).
 */
export const policyForm = z
  .object({
    name: z.string(),
    severity: z.string(),
    kind: z.string(),
    siteId: z.string(),
    forMinutes: z.string(),
    thresholdPercent: z.string(),
    restarts: z.string(),
    windowMinutes: z.string(),
    expr: z.string(),
  })
  .transform((values, ctx) => {
    const kind = values.kind as PolicyKind;
    const spec: Record<string, unknown> = { kind };
    for (const param of POLICY_KINDS[kind]?.params ?? []) {
      const text = values[param].trim();
      spec[param] = NUMERIC.includes(param) ? (text === "" ? Number.NaN : Number(text)) : text;
    }
    const parsed = createAlertPolicyInput.safeParse({
      name: values.name,
      severity: values.severity,
      spec,
      ...(values.siteId && kind !== "promql" ? { siteId: values.siteId } : {}),
    });
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) {
      const last = String(issue.path.at(-1) ?? "");
      const field = last in values ? last : issue.path[0] === "spec" ? "kind" : "name";
      ctx.addIssue({ code: "custom", path: [field], message: issue.message });
    }
    return z.NEVER;
  });
