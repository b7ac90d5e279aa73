import { describe, expect, it } from "vitest";
import { memStats, parseTop, parseTopBytes, totalBytes, totalMs } from "../src/scale/go-profile.js";

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

// What `go tool pprof -sample_index=inuse_space -top -nodecount=4 leaf-heap.pprof` prints
// (a leaf nats-server holding 2,000 nodes).
const HEAP = `File: nats-server
Type: inuse_space
Time: 2026-11-29 22:19:05 UTC
Showing nodes accounting for 50553.93kB, 100% of 50553.93kB total
Showing top 4 nodes out of 80
      flat  flat%   sum%        cum   cum%
12369.18kB 24.47% 24.47% 12369.18kB 24.47%  github.com/nats-io/nats-server/v2/server.(*Server).createClientEx
 8193.62kB 16.21% 40.67% 14849.93kB 29.37%  github.com/nats-io/nats-server/v2/server.(*Sublist).Insert-range1
    2050kB  4.06% 77.71%     2050kB  4.06%  github.com/nats-io/nats-server/v2/server.(*client).addSubToRouteTargets
         0     0%   100%  2049.52kB  4.05%  encoding/json.(*decodeState).object
`;

describe("go tool pprof -sample_index=inuse_space -top, read", () => {
  it("takes each allocation site's live bytes as a share of the sampled total", () => {
    const total = totalBytes(HEAP);
    expect(total).toBe(Math.round(50553.93 * 1024));
    const top = parseTopBytes(HEAP, total);
    expect(top.map((e) => e.bytes)).toEqual([
      Math.round(12369.18 * 1024),
      Math.round(8193.62 * 1024),
      2050 * 1024,
      0,
    ]);
    expect(top[0]?.fn).toBe("github.com/nats-io/nats-server/v2/server.(*Server).createClientEx");
    expect(top[0]?.percent).toBeCloseTo(24.47, 2);
    expect(totalBytes("no profile here")).toBe(0);
  });

  it("reads the runtime's figures of /debug/pprof/heap?debug=1, the in-use side of `in-use / sys`", () => {
    const stats = memStats(
      "# runtime.MemStats\n# Sys = 142793000\n# HeapInuse = 74809344\n# Stack = 55607296 / 55607296\n",
    );
    expect(stats).toMatchObject({ Sys: 142793000, HeapInuse: 74809344, Stack: 55607296 });
  });
});
