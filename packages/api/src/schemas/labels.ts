import { z } from "zod";

/** Keys as in Kubernetes: an optional DNS-style prefix and `/`, then a name. */
export const LABEL_KEY =
  /^(?:[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
/** Values: up to 63 characters of letters, digits, `-`, `_` and `.`, starting and ending alphanumeric. */
export const LABEL_VALUE = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

export const labelKey = z.string().regex(LABEL_KEY, {
  error: (issue) =>
    `invalid label key ${JSON.stringify(issue.input)} (letters, digits, - _ . and one / prefix)`,
});
export const labelValue = z.string().regex(LABEL_VALUE, {
  error: (issue) => `invalid label value ${JSON.stringify(issue.input)} (up to 63 letters, digits, - _ .)`,
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
