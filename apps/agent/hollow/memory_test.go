package hollow

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edgefleet/edgefleet/apps/agent/internal/testnats"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// TestMeasureHollowMemory measures what one hollow agent costs in a generator process: N agents
// (EDGEFLEET_MEASURE_AGENTS, e.g. 2000; unset: skipped) enroll against a private nats-server, get
// 10 apps each with their first HelloReply, deliver their first status reports; then the process
// reports goroutines, heap and stacks in use and RSS per agent. Run it as the scale benchmark runs
// the generator (GOGC=50, packages/bench/src/scale/leaves.ts goMemoryEnv):
//
//	GOGC=50 EDGEFLEET_MEASURE_AGENTS=2000 go test ./hollow -run TestMeasureHollowMemory -count=1 -v -timeout 20m
//
// EDGEFLEET_MEASURE_SETTLE (a duration, default 20s) is the wait after the fleet is synced before
// the figures are read: long enough for each agent's randomised first heartbeat and metrics ticks
// to have run at the intervals its HelloReply names (hb 10 s, mx 15 s). EDGEFLEET_MEASURE_HEAP_PROFILE
// names a file for a heap profile taken then (go tool pprof -sample_index=inuse_space).
func TestMeasureHollowMemory(t *testing.T) {
	count, _ := strconv.Atoi(os.Getenv("EDGEFLEET_MEASURE_AGENTS"))
	if count <= 0 {
		t.Skip("set EDGEFLEET_MEASURE_AGENTS=N to measure N hollow agents (a benchmark, not a test)")
	}
	settle := 20 * time.Second
	if text := os.Getenv("EDGEFLEET_MEASURE_SETTLE"); text != "" {
		parsed, err := time.ParseDuration(text)
		if err != nil {
			t.Fatal(err)
		}
		settle = parsed
	}
	server := testnats.Start(t)
	testnats.NewPlatform(t, server, "zz") // EF_UP: the agents' reports get their PubAcks
	testnats.ApproveEnrollments(t, server, "m")
	answerHellosWithApps(t, server, 10, 10, 15)

	before := sample()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	started := time.Now()
	fleet, err := Start(ctx, Options{Count: count, Token: "t", Servers: []string{server.URL}, NamePrefix: "measure",
		AgentVersion: "0.1.0", OS: "linux", Arch: "x64", Heartbeat: 30 * time.Second, Metrics: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Stop()
	// Synced: connected, Hello answered, the 10 apps' reports (status, ack) delivered.
	for {
		synced := 0
		for _, a := range fleet.Agents {
			if a.Connected() && a.HellosAnswered() > 0 && a.Delivered() >= 2 {
				synced++
			}
		}
		if synced == count {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%d of %d agents synced", synced, count)
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("%d agents synced in %s; settling %s", count, time.Since(started).Round(time.Millisecond), settle)
	time.Sleep(settle)

	steady := sample()
	profile := goroutineSummary()
	if path := os.Getenv("EDGEFLEET_MEASURE_HEAP_PROFILE"); path != "" {
		writeHeapProfile(t, path)
	}
	runtime.GC()
	runtime.GC()
	collected := sample()
	per := func(value, base uint64) float64 { return float64(value-base) / float64(count) / 1024 }
	t.Logf("agents %d, GOGC=%s, connected %d", count, os.Getenv("GOGC"), fleet.Connected())
	t.Logf("goroutines per agent  %.2f  (%d in all, %d before the fleet)", float64(steady.goroutines-before.goroutines)/float64(count), steady.goroutines, before.goroutines)
	t.Logf("stack in use          %.1f KiB/agent", per(steady.stack, before.stack))
	t.Logf("heap in use           %.1f KiB/agent (%.1f KiB/agent live after a forced GC)", per(steady.heap, before.heap), per(collected.heap, before.heap))
	t.Logf("RSS                   %.1f KiB/agent (%.1f MiB in all, %.1f MiB before the fleet)", per(steady.rss, before.rss), float64(steady.rss)/(1<<20), float64(before.rss)/(1<<20))
	t.Logf("goroutines by where they wait:\n%s", profile)
}

// answerHellosWithApps answers every node's Hello with the intervals and, at revision 0, a delta
// putting apps apps (with artifacts: the simulated pull is reported on the way).
func answerHellosWithApps(t *testing.T, server *testnats.Server, apps int, hb, mx int64) {
	t.Helper()
	nc, err := nats.Connect(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	puts := make([]protocol.DesiredPut, apps)
	for i := range puts {
		puts[i] = protocol.DesiredPut{App: fmt.Sprintf("app%d", i), Ver: "1.0", Spec: protocol.RunSpec{Command: []string{"run"}},
			Art: &protocol.ArtifactRef{Sha: strings.Repeat(fmt.Sprintf("%02x", i), 32)}}
	}
	_, err = nc.Subscribe("ef.up.*.*.hello", func(msg *nats.Msg) {
		hello, err := protocol.DecodeAs[protocol.Hello](msg.Data)
		if err != nil {
			t.Errorf("bad hello: %v", err)
			return
		}
		reply := protocol.HelloReply{Hb: hb, Mx: mx}
		if hello.Rev == 0 {
			reply.D = &protocol.DeltaBody{From: 0, To: 1, Put: puts, Del: []string{}}
		}
		data, _ := protocol.Encode(reply)
		_ = msg.Respond(data)
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
}

func writeHeapProfile(t *testing.T, path string) {
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if err := pprof.Lookup("heap").WriteTo(file, 0); err != nil {
		t.Fatal(err)
	}
}

type memorySample struct {
	goroutines       int
	heap, stack, rss uint64
}

func sample() memorySample {
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	return memorySample{goroutines: runtime.NumGoroutine(), heap: stats.HeapInuse, stack: stats.StackInuse, rss: vmRSS()}
}

// vmRSS is the process's resident set (/proc/self/status VmRSS), in bytes.
func vmRSS() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if fields := strings.Fields(line); len(fields) >= 2 && fields[0] == "VmRSS:" {
			kib, _ := strconv.ParseUint(fields[1], 10, 64)
			return kib * 1024
		}
	}
	return 0
}

// goroutineSummary counts goroutines by the first frame outside the runtime and sync (the loop
// they belong to), largest groups first.
func goroutineSummary() string {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
	header := regexp.MustCompile(`^(\d+) @`)
	frame := regexp.MustCompile(`^#\s+0x[0-9a-f]+\s+(\S+)`)
	counts := map[string]int{}
	scanner := bufio.NewScanner(&buf)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	current, where := 0, ""
	flush := func() {
		if current > 0 {
			counts[where] += current
		}
		current, where = 0, ""
	}
	for scanner.Scan() {
		line := scanner.Text()
		if m := header.FindStringSubmatch(line); m != nil {
			flush()
			current, _ = strconv.Atoi(m[1])
			continue
		}
		if m := frame.FindStringSubmatch(line); m != nil && where == "" {
			name := m[1]
			if !strings.HasPrefix(name, "runtime.") && !strings.HasPrefix(name, "sync.") && !strings.HasPrefix(name, "time.") &&
				!strings.HasPrefix(name, "internal/") {
				where = name
			}
		}
	}
	flush()
	names := make([]string, 0, len(counts))
	for name := range counts {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return counts[names[i]] > counts[names[j]] })
	var out strings.Builder
	for _, name := range names {
		fmt.Fprintf(&out, "  %7d  %s\n", counts[name], name)
	}
	return out.String()
}
