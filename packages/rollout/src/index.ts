/**
 * @edgefleet/rollout — the pure core of staged rollouts: the strategy schema, the planner, the
 * decider and the operator actions. No I/O: callers pass nodes, state and the time, and persist
 * what comes back. Semantics for users: README.md of this package.
 */
export * from "./actions";
export * from "./canary";
export * from "./decide";
export * from "./gates/index";
export * from "./maintenance-windows";
export * from "./nodes";
export * from "./outcomes";
export * from "./persisted";
export * from "./plan";
export * from "./rollback";
export * from "./state";
export * from "./strategy";
export * from "./time";
export * from "./time-zones";
export * from "./uplink-use";
export * from "./view";
