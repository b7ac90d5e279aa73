export * from "./artifacts.js";
export * from "./codec.js";
export * from "./commands.js";
export * from "./enroll-seal.js";
export * from "./messages.js";
export * from "./run-spec.js";
export * from "./site-cache.js";
export * from "./subjects.js";
