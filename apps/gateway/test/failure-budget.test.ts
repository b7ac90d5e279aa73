import { describe, expect, it } from "vitest";
import { FailureBudget } from "../src/enrollment/failure-budget.js";

describe("FailureBudget", () => {
  it("admits a burst up to its capacity, then refills at its rate", () => {
    let now = 0;
    const budget = new FailureBudget(5, 2, () => now);
    for (let i = 0; i < 5; i++) expect(budget.take()).toBe(true);
    expect(budget.take()).toBe(false);
    now += 499; // 2 per second: just under one token back
    expect(budget.take()).toBe(false);
    now += 1;
    expect(budget.take()).toBe(true);
    now += 60_000; // never past its capacity
    for (let i = 0; i < 5; i++) expect(budget.take()).toBe(true);
    expect(budget.take()).toBe(false);
  });

  it("costs successful requests nothing: each gives its token back", () => {
    const budget = new FailureBudget(2, 1, () => 0);
    for (let i = 0; i < 100; i++) {
      expect(budget.take()).toBe(true);
      budget.refund();
    }
    budget.spend();
    budget.spend();
    expect(budget.take()).toBe(false);
  });
});
