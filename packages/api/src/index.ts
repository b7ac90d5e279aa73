import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "./root";

export { nodeStatuses } from "./domain/nodes";
export { type AppRouter, appRouter, createCaller } from "./root";
export {
  type ApiSession,
  type CreateContextOptions,
  createTRPCContext,
  type SessionMembership,
} from "./trpc";

export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;
