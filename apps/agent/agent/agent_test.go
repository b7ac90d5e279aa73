package agent

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/backoff"
	"github.com/edgefleet/edgefleet/apps/agent/internal/testnats"
	"github.com/edgefleet/edgefleet/apps/agent/metrics"
	"github.com/edgefleet/edgefleet/apps/agent/outbox"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
	"github.com/edgefleet/edgefleet/apps/agent/runtime"
)

const wid = "n1"

type testAgent struct {
	*Agent
	runtime *runtime.Runtime
	stopped bool
}

func startAgent(t *testing.T, stateDir string, server *testnats.Server) *testAgent {
	t.Helper()
	return startAgentWith(t, stateDir, server, Credentials{JWT: testnats.NodeJWT(wid, testnats.Site), Seed: testnats.Seed}, nil)
}

// startAgentWith starts the agent with these credentials; save stores re-issued ones (nil: none).
func startAgentWith(t *testing.T, stateDir string, server *testnats.Server, credentials Credentials, save func(string) error) *testAgent {
	t.Helper()
	return startAgentAt(t, stateDir, server.URL, credentials, save, nil)
}

// startAgentAt starts an agent on serverURL (a proxy in front of the test server, say); adjust,
// when given, changes its options before the start.
func startAgentAt(t *testing.T, stateDir, serverURL string, credentials Credentials, save func(string) error, adjust func(*Options)) *testAgent {
	t.Helper()
	apps := runtime.New(runtime.Options{AppsDir: filepath.Join(stateDir, "apps"),
		Backoff: runtime.RestartBackoff{MinDelay: 100 * time.Millisecond, MaxDelay: time.Second, StableAfter: time.Minute}})
	box, err := outbox.Open(outbox.Options{Dir: filepath.Join(stateDir, "outbox"), MaxBytes: 1 << 20, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	options := Options{
		Servers: []string{serverURL}, Credentials: credentials, SaveCredentials: save, Runtime: apps, Outbox: box,
		StatePath: filepath.Join(stateDir, "state.json"), HostSampler: metrics.NewHostSampler(stateDir),
		Heartbeat: time.Second, Metrics: time.Second,
		Reconnect:      backoff.Policy{Base: 100 * time.Millisecond, Max: time.Second},
		RequestTimeout: 2 * time.Second, AgentVersion: "0.1.0-test", OS: "linux", Arch: "x64", Logger: testLogger(t),
	}
	if adjust != nil {
		adjust(&options)
	}
	a, err := Start(options)
	if err != nil {
		t.Fatal(err)
	}
	started := &testAgent{Agent: a, runtime: apps}
	t.Cleanup(func() { started.stop() })
	return started
}

func (a *testAgent) stop() {
	if !a.stopped {
		a.stopped = true
		a.Stop(time.Second)
	}
}

func waitFor[T any](t *testing.T, what string, timeout time.Duration, probe func() (T, bool)) T {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if value, ok := probe(); ok {
			return value
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func sleeper(version string) protocol.DesiredPut {
	return protocol.DesiredPut{App: "sleeper", Ver: version, Spec: protocol.RunSpec{Command: []string{"sleep", "1000"}}}
}

func stored[T protocol.Message](platform *testnats.Platform, upType string) []T {
	var out []T
	for _, s := range platform.Stored() {
		if s.Type == upType {
			out = append(out, s.Msg.(T))
		}
	}
	return out
}

func acked(platform *testnats.Platform, rev int64) func() (bool, bool) {
	return func() (bool, bool) {
		for _, ack := range stored[protocol.DesiredAck](platform, "ack") {
			if ack.Rev == rev {
				return true, true
			}
		}
		return false, false
	}
}

func TestAppliesTheDesiredStateAcknowledgesAndReports(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid)
	platform.Prepare(sleeper("1.0"))
	a := startAgent(t, t.TempDir(), server)

	waitFor(t, "ack of revision 1", 10*time.Second, acked(platform, 1))
	if revs := platform.HelloRevisions(); revs[0] != 0 {
		t.Fatalf("first hello names revision %d", revs[0])
	}
	status := waitFor(t, "running status", 10*time.Second, func() (protocol.StatusReport, bool) {
		for _, s := range platform.Stored() {
			if report, ok := s.Msg.(protocol.StatusReport); ok && len(report.Inst) == 1 && report.Inst[0].St == protocol.StateRunning {
				// Idempotence is the report's own sequence, never a header the node picks.
				if s.Subject != testnats.Address(wid, testnats.Site).UpSubject(protocol.UpSt) || s.Headers.Get("Nats-Msg-Id") != "" {
					t.Fatalf("stored on %s with headers %v", s.Subject, s.Headers)
				}
				return report, true
			}
		}
		return protocol.StatusReport{}, false
	})
	if got := status.Inst[0]; got.App != "sleeper" || got.Ver != "1.0" || got.Rs != 0 {
		t.Fatalf("instance %+v", got)
	}

	// A live delta removes it; the removal is acknowledged and reported.
	platform.Delete("sleeper")
	waitFor(t, "ack of revision 2", 10*time.Second, acked(platform, 2))
	waitFor(t, "empty status", 10*time.Second, func() (bool, bool) {
		reports := stored[protocol.StatusReport](platform, "st")
		return true, len(reports) > 0 && len(reports[len(reports)-1].Inst) == 0
	})

	// Metrics every second (the HelloReply's interval), numbered from 1, with control bytes; the
	// first one sent connected times the round trip, the next ones not for rttEvery (a PING each).
	reports := waitFor(t, "metrics", 10*time.Second, func() ([]protocol.MetricsReport, bool) {
		reports := stored[protocol.MetricsReport](platform, "mx")
		return reports, len(reports) >= 2
	})
	if reports[0].Seq != 1 || reports[1].Seq != 2 || reports[1].Mt <= 0 || (reports[0].RTT == nil) == (reports[1].RTT == nil) {
		t.Fatalf("metrics %+v", reports[:2])
	}
	if !slices.ContainsFunc(reports[1].Ctl, func(c protocol.ControlCount) bool { return c.Type == "hello" && c.Sent > 0 && c.Received > 0 }) {
		t.Fatalf("no hello control bytes in %+v", reports[1].Ctl)
	}
	if stats := a.Stats(); stats.HeartbeatsSent == 0 || stats.AppliedRevision != 2 {
		t.Fatalf("stats %+v", stats)
	}
}

func TestMetricsReportsQuietTheHeartbeatWhenTheGatewayCountsThem(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid)
	// Metrics every second, heartbeats due every 2 s: while reports are acknowledged, none is needed.
	platform.Hb, platform.Mx, platform.RQ = 2, 1, true
	a := startAgent(t, t.TempDir(), server)
	waitFor(t, "3 metrics reports", 10*time.Second, func() (bool, bool) {
		return true, len(stored[protocol.MetricsReport](platform, "mx")) >= 3
	})
	before := a.Stats().HeartbeatsSent
	time.Sleep(5 * time.Second)
	if sent := a.Stats().HeartbeatsSent - before; sent != 0 {
		t.Fatalf("%d heartbeats in 5 s while metrics reports were acknowledged every second", sent)
	}

	// The hub stops acknowledging reports: heartbeats come back, one per interval.
	platform.DeleteStream()
	stalled := a.Stats().HeartbeatsSent
	waitFor(t, "heartbeats again", 10*time.Second, func() (bool, bool) {
		return true, a.Stats().HeartbeatsSent >= stalled+2
	})
}

func TestALinkOutageLosesNothingAndARestartResumes(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid)
	platform.Prepare(sleeper("1.0"))
	stateDir := t.TempDir()
	a := startAgent(t, stateDir, server)
	waitFor(t, "ack of revision 1", 10*time.Second, acked(platform, 1))
	waitFor(t, "metrics delivered", 10*time.Second, func() (bool, bool) {
		stats := a.Stats()
		return true, stats.Outbox.Records == 0 && len(stored[protocol.MetricsReport](platform, "mx")) >= 1
	})

	// The link goes down for a few seconds: reports pile up in the outbox.
	server.Stop()
	waitFor(t, "disconnected", 5*time.Second, func() (bool, bool) { return true, !a.Stats().Connected })
	waitFor(t, "buffered offline", 10*time.Second, func() (bool, bool) { return true, a.Stats().Outbox.Records >= 3 })
	server.Start()
	waitFor(t, "outbox drained", 20*time.Second, func() (bool, bool) {
		stats := a.Stats()
		return true, stats.Connected && stats.Outbox.Records == 0
	})
	a.stop()

	// Every metrics report 1..N is in the stream, none lost across the outage.
	reports := stored[protocol.MetricsReport](platform, "mx")
	var seqs []int64
	for _, r := range reports {
		seqs = append(seqs, r.Seq)
	}
	slices.Sort(seqs)
	seqs = slices.Compact(seqs)
	if len(seqs) < 3 || seqs[0] != 1 || seqs[len(seqs)-1] != int64(len(seqs)) {
		t.Fatalf("metrics sequences %v (stats %+v, stored %d)", seqs, a.Stats(), len(platform.Stored()))
	}

	// A new agent run on the same state dir: resumes from revision 1 and never reuses a sequence.
	again := startAgent(t, stateDir, server)
	waitFor(t, "second hello with revision 1", 10*time.Second, func() (bool, bool) {
		revs := platform.HelloRevisions()
		return true, len(revs) >= 2 && revs[len(revs)-1] == 1
	})
	next := waitFor(t, "a metrics report from the new run", 10*time.Second, func() (int64, bool) {
		reports := stored[protocol.MetricsReport](platform, "mx")
		last := reports[len(reports)-1].Seq
		return last, last > seqs[len(seqs)-1]
	})
	if next != seqs[len(seqs)-1]+1 {
		t.Fatalf("new run continued at %d after %d", next, seqs[len(seqs)-1])
	}
	waitFor(t, "app running again", 10*time.Second, func() (bool, bool) {
		inst := again.runtime.Instances()
		return true, len(inst) == 1 && inst[0].St == protocol.StateRunning
	})
}

func TestStartsWithTheServerUnreachable(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid)
	platform.Prepare(sleeper("1.0"))
	server.Stop()
	a := startAgent(t, t.TempDir(), server)
	time.Sleep(1500 * time.Millisecond)
	if a.Stats().Connected {
		t.Fatal("connected to a stopped server")
	}
	server.Start()
	waitFor(t, "connected and applied", 20*time.Second, func() (bool, bool) { return true, a.Stats().AppliedRevision == 1 })

	// Offline again, a stop does not wait for the link.
	server.Stop()
	waitFor(t, "disconnected", 5*time.Second, func() (bool, bool) { return true, !a.Connected() })
	started := time.Now()
	a.stop()
	if elapsed := time.Since(started); elapsed > 3*time.Second {
		t.Fatalf("an offline stop took %v", elapsed)
	}
}

func TestBadInputIsRefusedAndTheAgentKeepsRunning(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid)
	a := startAgent(t, t.TempDir(), server)
	waitFor(t, "hello", 10*time.Second, func() (bool, bool) { return true, a.Stats().HellosAnswered > 0 })

	platform.PublishRaw([]byte{0xc1})                                                   // not msgpack
	platform.PublishRaw(make([]byte, protocol.SizeLimits[protocol.TypeDesiredDelta]+1)) // oversized delta
	platform.PublishRaw([]byte{0x82, 0xa1, 0x76, 0x02, 0xa1, 0x73, 0x01})               // unknown version
	platform.PublishRaw([]byte{0x81, 0xa1, 0x73, 0x01})                                 // no version
	waitFor(t, "four refusals", 5*time.Second, func() (map[protocol.Reason]int64, bool) {
		r := a.Stats().Rejected
		return r, r[protocol.ReasonNotMsgpack] == 1 && r[protocol.ReasonTooLarge] == 1 && r[protocol.ReasonUnknownVersion] == 1 && r[protocol.ReasonInvalid] == 1
	})

	// A desired app whose command does not exist: reported failed, tried again, acknowledged.
	platform.Put(protocol.DesiredPut{App: "ghost", Ver: "1", Spec: protocol.RunSpec{Command: []string{"/no/such/command"}}})
	waitFor(t, "ack of the ghost", 10*time.Second, acked(platform, 1))
	failed := waitFor(t, "ghost reported failed", 10*time.Second, func() (protocol.InstanceStatus, bool) {
		for _, report := range stored[protocol.StatusReport](platform, "st") {
			for _, inst := range report.Inst {
				if inst.App == "ghost" && inst.St == protocol.StateFailed {
					return inst, true
				}
			}
		}
		return protocol.InstanceStatus{}, false
	})
	if failed.Why == nil || !strings.Contains(*failed.Why, "cannot start") {
		t.Fatalf("why %v", failed.Why)
	}
	// Still alive and serving: a later delta applies.
	platform.Put(sleeper("1.0"))
	waitFor(t, "ack after bad input", 10*time.Second, acked(platform, 2))
}

func TestACorruptStateFileIsSetAsideAndSequencesStayNewer(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid)
	stateDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(stateDir, "state.json"), []byte("{\"rev\": 7, \"seq\": "), 0o600); err != nil {
		t.Fatal(err)
	}
	before := time.Now().UnixMilli()
	a := startAgent(t, stateDir, server)
	waitFor(t, "hello from revision 0", 10*time.Second, func() (bool, bool) {
		revs := platform.HelloRevisions()
		return true, len(revs) > 0 && revs[0] == 0
	})
	report := waitFor(t, "a metrics report", 10*time.Second, func() (protocol.MetricsReport, bool) {
		reports := stored[protocol.MetricsReport](platform, "mx")
		if len(reports) == 0 {
			return protocol.MetricsReport{}, false
		}
		return reports[0], true
	})
	if report.Seq <= before {
		t.Fatalf("sequence %d after recovery is not past the clock (%d)", report.Seq, before)
	}
	aside, _ := filepath.Glob(filepath.Join(stateDir, "state.json.corrupt-*"))
	if len(aside) != 1 || !a.Stats().Connected {
		t.Fatalf("corrupt file not set aside: %v", aside)
	}
}

// testLogger shows the agent's log with `go test -v`.
func testLogger(t *testing.T) *slog.Logger {
	if !testing.Verbose() {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil)).With("test", t.Name())
}

// An agent enrolled before subject layout 2 (credentials naming `ef.up.<wid>.>`) gets new ones in
// its first HelloReply, stores them, connects again with them and reports on the new subjects only
// (docs/protocol.md "Credentials"; the reference agent's test is agent.integration.test.ts).
func TestMigratesFromSubjectLayout1AtItsFirstHello(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid)
	platform.Prepare(sleeper("1.0"))
	layout2 := testnats.NodeJWT(wid, testnats.Site)
	platform.ReissueAtHello(layout2)
	saved := make(chan string, 4)
	a := startAgentWith(t, t.TempDir(), server, Credentials{JWT: testnats.NodeJWT(wid, ""), Seed: testnats.Seed},
		func(jwt string) error { saved <- jwt; return nil })

	waitFor(t, "ack of revision 1", 10*time.Second, acked(platform, 1))
	if got := <-saved; got != layout2 {
		t.Fatal("stored other credentials than the re-issued ones")
	}
	platform.Put(sleeper("2.0")) // on the new downlink
	waitFor(t, "ack of revision 2", 10*time.Second, acked(platform, 2))
	stats := a.Stats()
	if stats.CredentialSwitches != 1 || stats.Address.Site != testnats.Site {
		t.Fatalf("stats %+v", stats)
	}
	sites := platform.HelloSites()
	if len(sites) < 2 || sites[0] != "" || sites[1] != testnats.Site {
		t.Fatalf("hello sites %q: want a layout-1 Hello, then the new site's", sites)
	}
	for _, s := range platform.Stored() {
		if !strings.HasPrefix(s.Subject, "ef.up."+testnats.Site+".") {
			t.Fatalf("a report went out on %s, before the switch", s.Subject)
		}
	}
}

// A node moved to another site gets its new credentials pushed on its downlink: it switches at
// once, sends a fresh status snapshot and takes deltas on the new site's downlink.
func TestMovesToAnotherSiteWhenCredentialsArePushed(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid)
	a := startAgent(t, t.TempDir(), server)
	waitFor(t, "hello", 10*time.Second, func() (bool, bool) { return true, a.Stats().HellosAnswered > 0 })

	platform.PushCredentials(testnats.NodeJWT(wid, "_u"))
	waitFor(t, "a Hello from the new site", 10*time.Second, func() (bool, bool) {
		return true, platform.Address().Site == "_u"
	})
	moved := testnats.Address(wid, "_u").UpSubject(protocol.UpSt)
	waitFor(t, "status on the new site's subjects", 10*time.Second, func() (bool, bool) {
		for _, s := range platform.Stored() {
			if s.Subject == moved {
				return true, true
			}
		}
		return false, false
	})
	platform.Put(sleeper("1.0"))
	waitFor(t, "ack on the new site", 10*time.Second, acked(platform, 1))
	if stats := a.Stats(); stats.CredentialSwitches != 1 || stats.Address != testnats.Address(wid, "_u") {
		t.Fatalf("stats %+v", stats)
	}

	// Another node's credentials are ignored.
	platform.PushCredentials(testnats.NodeJWT("other", "_v"))
	time.Sleep(300 * time.Millisecond)
	if stats := a.Stats(); stats.CredentialSwitches != 1 || stats.Address.Site != "_u" {
		t.Fatalf("switched to another node's credentials: %+v", stats)
	}
}
