package agent

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/internal/testnats"
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
	slow := slowLink(t, strings.TrimPrefix(server.URL, "nats://"), 3*time.Second)
	credentials := Credentials{JWT: testnats.NodeJWT(wid, testnats.Site), Seed: testnats.Seed}
	a := startAgentAt(t, t.TempDir(), slow, credentials, nil, func(options *Options) {
		options.RequestTimeout = 5 * time.Second
	})
	// With a 2 s handshake bound every attempt times out and this never happens.
	waitFor(t, "connected over the slow link and applied", 20*time.Second, func() (bool, bool) {
		return true, a.Stats().AppliedRevision == 1
	})
}
