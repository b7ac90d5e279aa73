import { z } from "zod";
import { roleSchema } from "../domain/roles";

export const createApiKeyInput = z.object({
  name: z.string().trim().min(1, "name is required").max(100),
  role: roleSchema,
  /** Optional; must be in the future. */
  expiresAt: z.coerce.date().optional(),
});

export const revokeApiKeyInput = z.object({ id: z.uuid() });
export const apiKeyIdInput = z.object({ id: z.uuid() });
