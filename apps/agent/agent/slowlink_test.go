package agent

import (
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/backoff"
	"github.com/edgefleet/edgefleet/apps/agent/internal/testnats"
	"github.com/edgefleet/edgefleet/apps/agent/metrics"
	"github.com/edgefleet/edgefleet/apps/agent/outbox"
	"github.com/edgefleet/edgefleet/apps/agent/runtime"
)

// slowLink forwards TCP connections to target, holding the server's first bytes (its INFO) for
// delay: a link whose handshake takes longer than nats.go's default 2 s connect timeout.
func slowLink(t *testing.T, target string, delay time.Duration) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = listener.Close() })
	go func() {
		for {
			client, err := listener.Accept()
			if err != nil {
				return
			}
			go func() {
				server, err := net.Dial("tcp", target)
				if err != nil {
					_ = client.Close()
					return
				}
				go func() { _, _ = io.Copy(server, client); _ = server.Close() }()
				time.Sleep(delay)
				_, _ = io.Copy(client, server)
				_ = client.Close()
			}()
		}
	}()
	return "nats://" + listener.Addr().String()
}

func TestConnectsOverALinkWhoseHandshakeTakesLongerThanTwoSeconds(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid)
	platform.Prepare(sleeper("1.0"))
	stateDir := t.TempDir()
	apps := runtime.New(runtime.Options{AppsDir: filepath.Join(stateDir, "apps"),
		Backoff: runtime.RestartBackoff{MinDelay: 100 * time.Millisecond, MaxDelay: time.Second, StableAfter: time.Minute}})
	box, err := outbox.Open(outbox.Options{Dir: filepath.Join(stateDir, "outbox"), MaxBytes: 1 << 20, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	a, err := Start(Options{
		Servers:     []string{slowLink(t, strings.TrimPrefix(server.URL, "nats://"), 3*time.Second)},
		Credentials: Credentials{JWT: testnats.NodeJWT(wid, testnats.Site), Seed: testnats.Seed},
		Runtime:     apps, Outbox: box, StatePath: filepath.Join(stateDir, "state.json"),
		HostSampler: metrics.NewHostSampler(stateDir), Heartbeat: time.Second, Metrics: time.Second,
		Reconnect:      backoff.Policy{Base: 100 * time.Millisecond, Max: time.Second},
		RequestTimeout: 5 * time.Second, AgentVersion: "0.1.0-test", OS: "linux", Arch: "x64", Logger: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(time.Second) })
	// With a 2 s handshake bound every attempt times out and this never happens.
	waitFor(t, "connected over the slow link and applied", 20*time.Second, func() (bool, bool) {
		return true, a.Stats().AppliedRevision == 1
	})
}
