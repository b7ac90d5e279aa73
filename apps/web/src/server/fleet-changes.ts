import "server-only";
import { FleetChangeFeed } from "@edgefleet/db";
import { env } from "~/env";

// One LISTEN connection per server process, however many live pages are open; kept on globalThis
// in `next dev`, which re-evaluates modules on every change. It connects at the first subscription.
const globalForFeed = globalThis as unknown as { edgefleetFleetChanges?: FleetChangeFeed };

export const fleetChanges: FleetChangeFeed =
  globalForFeed.edgefleetFleetChanges ??
  new FleetChangeFeed(env.DATABASE_URL, {
    onError: (error) =>
      console.error("live updates: lost the Postgres LISTEN connection; reconnecting", error),
  });
if (env.NODE_ENV !== "production") globalForFeed.edgefleetFleetChanges = fleetChanges;
