import {
  LABEL_KEY,
  LABEL_VALUE,
  parseSelector,
  SELECTOR_MAX_LENGTH,
  SelectorSyntaxError,
} from "@edgefleet/selectors";
import { z } from "zod";

// One definition of what a label is: the selector package's (pure, so the console can import it).
export { LABEL_KEY, LABEL_VALUE };

export const labelKey = z.string().regex(LABEL_KEY, {
  error: (issue) =>
    `invalid label key ${JSON.stringify(issue.input)} (letters, digits, - _ . and one / prefix)`,
});
export const labelValue = z.string().regex(LABEL_VALUE, {
  error: (issue) => `invalid label value ${JSON.stringify(issue.input)} (up to 63 letters, digits, - _ .)`,
});

/** A label selector (Kubernetes syntax) that parses; "" selects every node. */
export const labelSelector = z
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

export const BULK_IDS_MAX = 1000;

export const bulkUpdateLabelsInput = z
  .object({
    target: z.union([
      z.object({ selector: z.string().trim().min(1, "a selector is required").max(1000) }),
      z.object({ ids: z.array(z.uuid()).min(1).max(BULK_IDS_MAX) }),
    ]),
    add: z.record(labelKey, labelValue).default({}),
    remove: z.array(labelKey).max(100).default([]),
  })
  .refine((input) => Object.keys(input.add).length + input.remove.length > 0, {
    message: "nothing to change: give labels to add or keys to remove",
  })
  .refine((input) => !input.remove.some((key) => Object.hasOwn(input.add, key)), {
    message: "a key cannot be both added and removed",
  });
