export * from "./cohort";
export * from "./judge";
export * from "./mann-whitney";
export * from "./progress";
export * from "./queries";
export * from "./spec";
