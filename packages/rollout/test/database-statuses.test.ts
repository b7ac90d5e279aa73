/** The statuses must be the database enum's, so the controller stores them as they are. */
import { RolloutStatus as DatabaseRolloutStatus } from "@edgefleet/db";
import { expect, it } from "vitest";
import { ROLLOUT_STATUSES, type RolloutStatus } from "../src";

// Both directions, checked by the compiler.
const toDatabase: readonly DatabaseRolloutStatus[] = ROLLOUT_STATUSES;
const fromDatabase: readonly RolloutStatus[] = Object.values(DatabaseRolloutStatus);

it("ROLLOUT_STATUSES are exactly the values of RolloutStatus in schema.prisma", () => {
  expect([...toDatabase].sort()).toEqual([...fromDatabase].sort());
});
