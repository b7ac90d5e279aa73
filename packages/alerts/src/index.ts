export * from "./alertmanager-config";
export * from "./node-series";
export * from "./policy";
export * from "./quiet-hours";
export * from "./relay-token";
export * from "./rules";
export * from "./webhook-url";
