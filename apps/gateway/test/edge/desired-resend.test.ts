import { describe, expect, it } from "vitest";
import { resendDue } from "../../src/edge/desired/desired-publisher.js";

const RESCAN = 30_000;

describe("resendDue: when the rescan sends a lagging node its delta again", () => {
  it.each([
    { case: "never sent", sent: undefined, after: 0, due: true },
    { case: "sent once, one period ago", sent: 1, after: RESCAN, due: true },
    { case: "sent once, just under a period ago", sent: 1, after: RESCAN - 1, due: false },
    { case: "sent twice: waits two periods", sent: 2, after: 2 * RESCAN - 1, due: false },
    { case: "sent twice, two periods ago", sent: 2, after: 2 * RESCAN, due: true },
    { case: "sent three times: waits four periods", sent: 3, after: 4 * RESCAN - 1, due: false },
    { case: "sent three times, four periods ago", sent: 3, after: 4 * RESCAN, due: true },
    { case: "sent 40 times: the wait stops doubling at 16 periods", sent: 40, after: 16 * RESCAN, due: true },
    { case: "sent 40 times, just under 16 periods", sent: 40, after: 16 * RESCAN - 1, due: false },
  ])("$case → $due", ({ sent, after, due }) => {
    const at = 1_000_000;
    const last = sent === undefined ? undefined : { revision: 7, at, sends: sent };
    expect(resendDue(last, at + after, RESCAN)).toBe(due);
  });
});
