import { alertRouter } from "./routers/alert";
import { apiKeyRouter } from "./routers/apiKey";
import { appsRouter } from "./routers/app";
import { appVersionRouter } from "./routers/appVersion";
import { auditRouter } from "./routers/audit";
import { enrollmentRouter } from "./routers/enrollment";
import { fleetRouter } from "./routers/fleet";
import { memberRouter } from "./routers/member";
import { metricsRouter } from "./routers/metrics";
import { nodeRouter } from "./routers/node";
import { organizationRouter } from "./routers/organization";
import { pushRouter } from "./routers/push";
import { rolloutRouter } from "./routers/rollout";
import { searchRouter } from "./routers/search";
import { siteRouter } from "./routers/site";
import { createCallerFactory, createTRPCRouter } from "./trpc";

export const appRouter = createTRPCRouter({
  organization: organizationRouter,
  node: nodeRouter,
  fleet: fleetRouter,
  site: siteRouter,
  metrics: metricsRouter,
  member: memberRouter,
  apiKey: apiKeyRouter,
  audit: auditRouter,
  enrollment: enrollmentRouter,
  app: appsRouter,
  appVersion: appVersionRouter,
  search: searchRouter,
  rollout: rolloutRouter,
  alert: alertRouter,
  push: pushRouter,
});

export type AppRouter = typeof appRouter;

/** Server-side caller, e.g. `createCaller(createTRPCContext({...})).node.list({ limit: 20 })`. */
export const createCaller = createCallerFactory(appRouter);
