import { describe, expect, it } from "vitest";
import { parseTop, totalMs } from "../src/scale/go-profile.js";

// What `go tool pprof -top -nodecount=5 hub.pprof` prints (nats-server 2.15, Go 1.24).
const FLAT = `File: nats-server
Type: cpu
Time: 2026-11-29 09:50:02 UTC
Duration: 30s, Total samples = 5.12s (17.07%)
Showing nodes accounting for 2.63s, 51.37% of 5.12s total
Dropped 212 nodes (cum <= 0.03s)
Showing top 5 nodes out of 310
      flat  flat%   sum%        cum   cum%
     1.20s 23.44% 23.44%      1.20s 23.44%  internal/runtime/syscall.Syscall6
     0.90s 17.58% 41.02%      1.10s 21.48%  runtime.futex
     0.33s  6.45% 47.46%      2.01s 39.26%  github.com/nats-io/nats-server/v2/server.(*client).processInboundLeafMsg
   200ms  3.91% 51.37%      450ms  8.79%  github.com/nats-io/nats-server/v2/server.(*fileStore).storeRawMsg
         0     0% 51.37%      0.21s  4.10%  github.com/nats-io/nats-server/v2/server.(*consumerFileStore).writeState
`;

describe("go tool pprof -top, read", () => {
  it("takes the total and each row's flat or cumulative time as a share of it", () => {
    expect(totalMs(FLAT)).toBe(5120);
    const flat = parseTop(FLAT, "flat", 5120);
    expect(flat.map((e) => e.fn)).toEqual([
      "internal/runtime/syscall.Syscall6",
      "runtime.futex",
      "github.com/nats-io/nats-server/v2/server.(*client).processInboundLeafMsg",
      "github.com/nats-io/nats-server/v2/server.(*fileStore).storeRawMsg",
      "github.com/nats-io/nats-server/v2/server.(*consumerFileStore).writeState",
    ]);
    expect(flat.map((e) => e.ms)).toEqual([1200, 900, 330, 200, 0]);
    expect(flat[0]?.percent).toBeCloseTo(23.44, 2);
    const cumulative = parseTop(FLAT, "cum", 5120);
    expect(cumulative.map((e) => e.ms)).toEqual([1200, 1100, 2010, 450, 210]);
  });

  it("reads minutes and milliseconds, and nothing from text that is not a profile", () => {
    expect(totalMs("Showing nodes accounting for 50ms, 100% of 1.5min total")).toBe(90_000);
    expect(totalMs("no profile here")).toBe(0);
    expect(parseTop('go: no such tool "pprof"', "flat", 100)).toEqual([]);
  });
});
