import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { INGEST_STALL_MS, judgeIngestProgress } from "../../src/edge/ingest/ingest-progress.js";

const idle = {
  handlersBusy: 0,
  handlerLimit: 256,
  consumer: { numPending: 0, numWaiting: 0, numAckPending: 0 },
};

describe("judgeIngestProgress", () => {
  it.each([
    ["recent message", { ...idle, idleMs: 1_000, consumer: { ...idle.consumer, numPending: 5 } }, "moving"],
    ["nothing waiting", { ...idle, idleMs: 10 * INGEST_STALL_MS }, "moving"],
    [
      "handlers at the limit",
      {
        ...idle,
        idleMs: 2 * INGEST_STALL_MS,
        handlersBusy: 256,
        consumer: { ...idle.consumer, numPending: 9 },
      },
      "held_back",
    ],
    [
      "a pull outstanding",
      { ...idle, idleMs: 2 * INGEST_STALL_MS, consumer: { numPending: 9, numWaiting: 1, numAckPending: 0 } },
      "held_back",
    ],
    [
      "work waiting, loop free, no pull",
      {
        ...idle,
        idleMs: INGEST_STALL_MS,
        consumer: { numPending: 341_415, numWaiting: 0, numAckPending: 0 },
      },
      "stalled",
    ],
  ])("%s → %s", (_name, facts, verdict) => {
    expect(judgeIngestProgress(facts).verdict).toBe(verdict);
  });

  it("never calls a consume stalled while its handlers are at the limit or nothing waits", () => {
    fc.assert(
      fc.property(
        fc.nat(10 * INGEST_STALL_MS),
        fc.nat(300),
        fc.nat(1_000_000),
        fc.nat(3),
        (idleMs, handlersBusy, numPending, numWaiting) => {
          const verdict = judgeIngestProgress({
            idleMs,
            handlersBusy,
            handlerLimit: 256,
            consumer: { numPending, numWaiting, numAckPending: 0 },
          }).verdict;
          const stalled =
            idleMs >= INGEST_STALL_MS && numPending > 0 && handlersBusy < 256 && numWaiting === 0;
          expect(verdict === "stalled").toBe(stalled);
        },
      ),
    );
  });
});
