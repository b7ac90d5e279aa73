import { z } from "zod";

/** What "find anything" (the console's command palette) can find. */
export const searchKinds = ["node", "site", "app", "rollout"] as const;
export type SearchKind = (typeof searchKinds)[number];

export const searchInput = z.object({
  query: z.string().trim().min(1, "type part of a name").max(100),
  /** Per kind. */
  limit: z.number().int().min(1).max(20).default(6),
});
