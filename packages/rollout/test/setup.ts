import fc from "fast-check";

// The test command runs the properties with one fixed seed, so CI is deterministic; explore other
// seeds with FC_SEED=<n> (or FC_SEED=random). A counterexample found that way is kept in the
// package README under "Known issues" until it is fixed.
const seed = process.env.FC_SEED;
if (seed !== "random") fc.configureGlobal({ seed: seed ? Number(seed) : 20_261_125 });
