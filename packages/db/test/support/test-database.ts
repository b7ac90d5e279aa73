// Kept for the db package's own tests; the implementation is shared as @edgefleet/db/testing.
export * from "../../src/testing";
