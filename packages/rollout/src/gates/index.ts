export * from "./cohort";
export * from "./judge";
export * from "./mann-whitney";
export * from "./queries";
export * from "./spec";
