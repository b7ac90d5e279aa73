import { describe, expect, it } from "vitest";
import { ConnectPacer, fullJitterDelay, ReconnectBackoff } from "../src/agent/backoff.js";

const policy = { baseMs: 500, maxMs: 30_000 };

describe("full-jitter backoff", () => {
  it("draws from [0, min(max, base·2^attempt))", () => {
    expect(fullJitterDelay(0, policy, () => 0)).toBe(0);
    expect(fullJitterDelay(0, policy, () => 0.999_999)).toBe(499);
    expect(fullJitterDelay(3, policy, () => 0.999_999)).toBe(3_999);
    expect(fullJitterDelay(10, policy, () => 0.999_999)).toBe(29_999);
    expect(fullJitterDelay(1_000, policy, () => 0.5)).toBe(15_000);
  });

  it("spreads a fleet's delays over the whole window (jitter, not waves)", () => {
    const delays = Array.from({ length: 2_000 }, () => fullJitterDelay(5, policy));
    const ceiling = 500 * 2 ** 5; // below maxMs, so the window is exactly base·2^attempt
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays)).toBeLessThan(ceiling);
    // Roughly uniform: each quarter of the window holds about a quarter of the delays.
    for (let quarter = 0; quarter < 4; quarter++) {
      const inQuarter = delays.filter((delay) => Math.floor((delay / ceiling) * 4) === quarter).length;
      expect(inQuarter).toBeGreaterThan(400);
      expect(inQuarter).toBeLessThan(600);
    }
    expect(new Set(delays).size).toBeGreaterThan(1_000);
  });

  it("keeps one delay per attempt for the client's repeated asks, grows per attempt, resets", () => {
    const values = [0.5, 0.5, 0.5, 0.5];
    const backoff = new ReconnectBackoff(policy, () => values.shift() ?? 0.5);
    expect(backoff.delay()).toBe(250);
    expect(backoff.delay()).toBe(250);
    backoff.nextAttempt();
    expect(backoff.delay()).toBe(500);
    backoff.nextAttempt();
    expect(backoff.delay()).toBe(1_000);
    backoff.reset();
    expect(backoff.delay()).toBe(250);
  });
});

describe("connect pacer (many agents in one process)", () => {
  it("gives each attempt its own slot, spaced 1/perSecond apart, never before the jitter", () => {
    let now = 1_000;
    const pacer = new ConnectPacer(100, () => now);
    expect([pacer.slotAfter(0), pacer.slotAfter(0), pacer.slotAfter(0)]).toEqual([0, 10, 20]);
    expect(pacer.slotAfter(500)).toBe(500);
    now += 1_000;
    expect(pacer.slotAfter(0)).toBe(0);
  });

  it("widens the spacing on failed attempts and narrows it back on successes", () => {
    const pacer = new ConnectPacer(100, () => 0);
    pacer.failed();
    pacer.failed();
    expect(pacer.spacing()).toBe(22.5);
    for (let i = 0; i < 200; i++) pacer.failed();
    expect(pacer.spacing()).toBe(200);
    for (let i = 0; i < 200; i++) pacer.succeeded();
    expect(pacer.spacing()).toBe(10);
  });

  it("is told by the backoff: a second attempt means the first failed, a reset means success", () => {
    const pacer = new ConnectPacer(100, () => 0);
    const backoff = new ReconnectBackoff(policy, () => 0, pacer);
    backoff.nextAttempt();
    expect(pacer.spacing()).toBe(10);
    backoff.nextAttempt();
    expect(pacer.spacing()).toBe(15);
    backoff.reset();
    expect(pacer.spacing()).toBe(13.5);
  });
});
