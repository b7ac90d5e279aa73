/**
 * The API's input schemas (zod only, no server code): the console validates its forms with the
 * same schemas the procedures parse, so a field is judged by one rule on both sides.
 */
export * from "../domain/roles";
export * from "./alerts";
export * from "./api-keys";
export * from "./apps";
export * from "./audit";
export * from "./enrollment";
export * from "./labels";
export * from "./members";
export * from "./node-commands";
export * from "./nodes";
export * from "./push";
export * from "./rollouts";
export * from "./search";
export * from "./sites";
