import { nodeRouter } from "./routers/node";
import { organizationRouter } from "./routers/organization";
import { createCallerFactory, createTRPCRouter } from "./trpc";

export const appRouter = createTRPCRouter({
  organization: organizationRouter,
  node: nodeRouter,
});

export type AppRouter = typeof appRouter;

/** Server-side caller, e.g. `createCaller(createTRPCContext({...})).node.list({ limit: 20 })`. */
export const createCaller = createCallerFactory(appRouter);
