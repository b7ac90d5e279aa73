import { describe, expect, it } from "vitest";
import { KeyedConcurrency } from "../../src/edge/ingest/keyed-concurrency.js";

/** A task that finishes when the test says so. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

describe("KeyedConcurrency", () => {
  it("runs different keys at once, up to the limit, and one key strictly in order", async () => {
    const queue = new KeyedConcurrency(2);
    const log: string[] = [];
    const gates = { a1: gate(), a2: gate(), b1: gate(), c1: gate() };
    const task = (name: keyof typeof gates) => async () => {
      log.push(`start ${name}`);
      await gates[name].opened;
      log.push(`end ${name}`);
    };
    await queue.submit("a", task("a1"));
    await queue.submit("a", task("a2"));
    // Two tasks (a1, and a2 queued behind it) hold both slots: b1 waits for one to finish.
    const admittedB = queue.submit("b", task("b1"));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(log).toEqual(["start a1"]);
    gates.a1.open();
    await admittedB;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(log).toEqual(["start a1", "end a1", "start a2", "start b1"]);
    gates.b1.open();
    gates.a2.open();
    await queue.submit("c", task("c1"));
    gates.c1.open();
    await queue.idle();
    expect(log.indexOf("end a2")).toBeGreaterThan(log.indexOf("start a2"));
    expect(log).toContain("end c1");
  });

  it("keeps going after a task fails", async () => {
    const queue = new KeyedConcurrency(1);
    const done: string[] = [];
    await queue.submit("a", async () => {
      throw new Error("boom");
    });
    await queue.submit("a", async () => {
      done.push("after");
    });
    await queue.idle();
    expect(done).toEqual(["after"]);
  });

  it("refuses a limit below one", () => {
    expect(() => new KeyedConcurrency(0)).toThrow(/positive integer/);
  });
});
