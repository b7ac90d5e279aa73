import { z } from "zod";
import { roleSchema } from "../domain/roles";

export const inviteMemberInput = z.object({
  email: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.email({ message: "email must be a valid e-mail address" })),
  role: roleSchema,
});

export const updateMemberRoleInput = z.object({ userId: z.uuid(), role: roleSchema });
export const removeMemberInput = z.object({ userId: z.uuid() });
export const memberIdInput = z.object({ userId: z.uuid() });
