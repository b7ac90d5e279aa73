package agent

import (
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/internal/testnats"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// freezableLink forwards TCP connections to target and counts the PINGs the client sends. freeze
// makes every connection open now silent in both directions without closing it: a NAT that
// dropped its state, a dead bearer. Connections opened later forward again.
type freezableLink struct {
	url    string
	opened atomic.Int64
	pings  atomic.Int64
	mu     sync.Mutex
	frozen []*atomic.Bool
}

func newFreezableLink(t *testing.T, target string) *freezableLink {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = listener.Close() })
	link := &freezableLink{url: "nats://" + listener.Addr().String()}
	go func() {
		for {
			client, err := listener.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				_ = client.Close()
				continue
			}
			t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
			link.opened.Add(1)
			frozen := &atomic.Bool{}
			link.mu.Lock()
			link.frozen = append(link.frozen, frozen)
			link.mu.Unlock()
			go link.pipe(server, client, frozen, true)
			go link.pipe(client, server, frozen, false)
		}
	}()
	return link
}

// pipe copies src to dst until either closes; frozen bytes are read and dropped.
func (l *freezableLink) pipe(dst io.Writer, src io.Reader, frozen *atomic.Bool, fromClient bool) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 && !frozen.Load() {
			if fromClient {
				l.pings.Add(int64(bytes.Count(buf[:n], []byte("PING\r\n"))))
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (l *freezableLink) freeze() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, frozen := range l.frozen {
		frozen.Store(true)
	}
}

func TestASilentLinkIsReplacedWithinTheLinkCheck(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid)
	platform.Prepare(sleeper("1.0"))
	link := newFreezableLink(t, strings.TrimPrefix(server.URL, "nats://"))
	credentials := Credentials{JWT: testnats.NodeJWT(wid, testnats.Site), Seed: testnats.Seed}
	a := startAgentAt(t, t.TempDir(), link.url, credentials, nil, func(options *Options) {
		options.LinkCheck = 1500 * time.Millisecond // reports are acknowledged every second
		options.RequestTimeout = 500 * time.Millisecond
	})
	// The first report times the round trip (a PING of its own, then none for minutes).
	waitFor(t, "a metrics report delivered", 10*time.Second, func() (bool, bool) {
		return true, len(stored[protocol.MetricsReport](platform, "mx")) >= 1
	})

	// Reports are acknowledged every second: they prove the link, and the check never pings.
	pingsBefore := link.pings.Load()
	time.Sleep(4 * time.Second)
	if pings := link.pings.Load() - pingsBefore; pings != 0 {
		t.Fatalf("%d PINGs while acknowledged reports flowed (%d connections)", pings, link.opened.Load())
	}

	// The link goes silent without closing: only the check can notice (the client's own pings
	// come every 10 min). The agent opens a new connection and says Hello on it.
	hellos := a.HellosAnswered()
	link.freeze()
	waitFor(t, "a new connection after the link went silent", 10*time.Second, func() (bool, bool) {
		return true, link.opened.Load() >= 2 && a.HellosAnswered() > hellos
	})
	if pings := link.pings.Load(); pings == 0 {
		t.Fatalf("the silent link was replaced without the check's PING")
	}
}
