import { describe, expect, it } from "vitest";
import { LogSession } from "../src/agent/log-session.js";
import { type CommandReply, LOG_MAX_LINE_BYTES, LOG_SESSION_LEASE_MS } from "../src/protocol/index.js";
import { AppLog, sanitizeLogLine } from "../src/runtime/app-log.js";

describe("app output ring", () => {
  it("sanitizes binary, coloured, invalid and enormous lines, and keeps within its bytes", () => {
    const log = new AppLog(4096);
    const heard: string[] = [];
    log.subscribe((line) => heard.push(line.text));
    log.write(
      Buffer.from(
        "plain\r\nbin\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\n\u001b[31mred\u001b[0m\tx\n",
      ),
    );
    log.write(Buffer.from("y".repeat(10_000)));
    log.write(Buffer.from([0x0a, 0x69, 0x6e, 0x20, 0xff, 0x0a]));
    expect(heard.slice(0, 3)).toEqual(["plain", "[binary output: 11 bytes not shown]", "red\tx"]);
    expect(Buffer.byteLength(heard[3] ?? "")).toBeLessThanOrEqual(LOG_MAX_LINE_BYTES + 64);
    expect(heard[3]).toMatch(/…\[\d+ bytes cut\]$/);
    expect(heard[4]).toBe("in \uFFFD");
    for (let index = 0; index < 500; index++) log.append(`filler ${index}`);
    expect(log.stats().bytes).toBeLessThanOrEqual(4096);
    expect(log.tail(1)[0]?.text).toBe("filler 499");
  });

  it("cuts a line at a character boundary, saying how much it dropped", () => {
    const line = sanitizeLogLine(Buffer.from("é".repeat(LOG_MAX_LINE_BYTES)));
    expect(line).toMatch(/^é+ …\[2048 bytes cut\]$/);
  });
});

function session(options: { credit: number; budget: number; follow?: boolean; tail?: number }) {
  const log = new AppLog();
  for (let index = 0; index < 10; index++) log.append(`old ${index}`);
  const sent: CommandReply[] = [];
  const ended: string[] = [];
  let now = 0;
  const opened = new LogSession({
    id: "s1",
    log,
    tail: options.tail ?? 5,
    follow: options.follow ?? true,
    budget: options.budget,
    credit: options.credit,
    send: (reply) => sent.push(reply),
    onEnd: (reason) => ended.push(reason),
    batchMs: 0,
    now: () => now,
  });
  return { log, sent, ended, opened, advance: (ms: number) => (now += ms) };
}

const lines = (sent: CommandReply[]) => sent.flatMap((reply) => reply.lg?.l ?? []);

describe("log session", () => {
  it("sends history within its credit at once, more only after credit", async () => {
    const { log, sent, opened } = session({ credit: 12, budget: 10_000 });
    opened.start();
    expect(sent[0]?.lg).toMatchObject({ p: 0, l: ["old 5", "old 6"] });
    log.append("new line");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(lines(sent)).toEqual(["old 5", "old 6"]);
    opened.grant(1000);
    expect(lines(sent)).toEqual(["old 5", "old 6", "old 7", "old 8", "old 9", "new line"]);
  });

  it("ends at its budget, after the history without follow, on cancel and when its lease lapses", () => {
    const budget = session({ credit: 1000, budget: 11 });
    budget.opened.start();
    expect(lines(budget.sent)).toEqual(["old 5", "old 6"]);
    expect(budget.ended).toEqual(["budget"]);
    expect(budget.sent.at(-1)?.lg?.end).toBe("budget");

    const history = session({ credit: 1000, budget: 10_000, follow: false });
    history.opened.start();
    expect(history.sent).toHaveLength(1);
    expect(history.sent[0]?.lg?.end).toBe("done");

    const cancelled = session({ credit: 1000, budget: 10_000 });
    cancelled.opened.start();
    cancelled.opened.end("cancelled");
    expect(cancelled.ended).toEqual(["cancelled"]);
    cancelled.log.append("after the end");
    expect(lines(cancelled.sent)).not.toContain("after the end");

    const lapsing = session({ credit: 1000, budget: 10_000 });
    lapsing.opened.start();
    lapsing.advance(LOG_SESSION_LEASE_MS - 1);
    expect(lapsing.opened.checkLease()).toBe(false);
    lapsing.opened.grant(0);
    lapsing.advance(LOG_SESSION_LEASE_MS - 1);
    expect(lapsing.opened.checkLease()).toBe(false);
    lapsing.advance(2);
    expect(lapsing.opened.checkLease()).toBe(true);
    expect(lapsing.ended).toEqual(["lapsed"]);
  });
});
