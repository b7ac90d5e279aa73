import { GATE_PRESETS, rolloutStrategySchema, WEEKDAYS } from "@edgefleet/rollout";
import { z } from "zod";
import { labelSelector as selectorField } from "./labels";

export { GATE_PRESETS, rolloutStrategySchema, WEEKDAYS };

export const rolloutTargetInput = z.object({
  /** Label selector (Kubernetes syntax); "" or absent: every node (of `siteIds`, if given). */
  selector: selectorField.default(""),
  /** Limit the target to these sites; empty or absent: every site. */
  siteIds: z.array(z.uuid()).max(500).default([]),
});

export const rolloutPlanInput = z.object({
  appVersionId: z.uuid(),
  target: rolloutTargetInput,
  strategy: rolloutStrategySchema,
});
