/**
 * @edgefleet/rollout-store — rollouts in Postgres: the nodes a rollout works on as the pure core
 * (@edgefleet/rollout) wants them, its state stored as a small document plus per-node rows, the
 * controller's step, and people's actions. Imported by the API (actions, views) and the gateway
 * (the controller); no tRPC, no NATS.
 */
export * from "./actions";
export * from "./fleet";
export * from "./gates";
export * from "./mimir";
export * from "./step";
export * from "./store";
