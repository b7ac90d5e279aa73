import { GATE_PRESETS, rolloutStrategySchema, WEEKDAYS } from "@edgefleet/rollout";
import { parseSelector, SELECTOR_MAX_LENGTH, SelectorSyntaxError } from "@edgefleet/selectors";
import { z } from "zod";

export { GATE_PRESETS, rolloutStrategySchema, WEEKDAYS };

const selectorField = z
  .string()
  .trim()
  .max(SELECTOR_MAX_LENGTH)
  .superRefine((text, ctx) => {
    try {
      parseSelector(text);
    } catch (error) {
      ctx.addIssue({
        code: "custom",
        message: error instanceof SelectorSyntaxError ? error.message : "invalid selector",
      });
    }
  });

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
