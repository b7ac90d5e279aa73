export * from "./alertmanager-config";
export * from "./internal-address";
export * from "./node-series";
export * from "./policy";
export * from "./push-actions";
export * from "./relay-token";
export * from "./rules";
export * from "./webhook-url";
