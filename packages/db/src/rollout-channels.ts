/**
 * Postgres NOTIFY channels the rollout controller (in the gateway) listens on. Payloads are ids
 * only; listeners read the rest from the tables.
 */

/** An app instance's state or version changed (status writer); payload: the organization id. */
export const INSTANCES_CHANGED_CHANNEL = "edgefleet_instances_changed";

/** A rollout was created or a person acted on it; payload: the rollout id. */
export const ROLLOUT_CHANGED_CHANNEL = "edgefleet_rollout_changed";
