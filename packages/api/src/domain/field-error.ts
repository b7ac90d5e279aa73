import { TRPCError } from "@trpc/server";
import { z } from "zod";

/** A refusal that names its input field, in the same shape as zod's input errors (REST `issues`). */
export function fieldError(path: (string | number)[], message: string): never {
  throw new TRPCError({
    code: "BAD_REQUEST",
    message,
    cause: z
      .unknown()
      .superRefine((_value, ctx) => ctx.addIssue({ code: "custom", path, message }))
      .safeParse(null).error,
  });
}
