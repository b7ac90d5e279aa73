// Package testnats runs a private nats-server with JetStream for the agent's tests, and a small
// stand-in for the gateway's Hello and desired-state handling (the TypeScript tests' platform.ts).
// Without operator mode there is no account mapping, so the EF_UP stream captures the agent-view
// subjects `ef.up.*.*.{st,mx,ack}` (and layout 1's `ef.up.*.{st,mx,ack}`) directly. Nodes get test
// credentials (NodeJWT): unsigned, the server checks nothing, the agent reads their permissions.
package testnats

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// Server is one nats-server process; Stop and Start keep its port and JetStream store.
type Server struct {
	URL  string
	t    *testing.T
	dir  string
	port int
	cmd  *exec.Cmd
}

// Binary is the nats-server to run: NATS_SERVER_BIN, else the installer's cache.
func Binary(t *testing.T) string {
	if bin := os.Getenv("NATS_SERVER_BIN"); bin != "" {
		return bin
	}
	cache := os.Getenv("EDGEFLEET_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "edgefleet")
	}
	matches, _ := filepath.Glob(filepath.Join(cache, "nats-server", "*", "nats-server"))
	if len(matches) == 0 {
		t.Fatalf("no nats-server: set NATS_SERVER_BIN or run ./edgefleet install")
	}
	return matches[len(matches)-1]
}

// Start runs a fresh server on a free port.
func Start(t *testing.T) *Server {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := listener.Addr().(*net.TCPAddr).Port
	listener.Close()
	s := &Server{t: t, dir: t.TempDir(), port: port, URL: fmt.Sprintf("nats://127.0.0.1:%d", port)}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// Start (re)starts the process and waits until it accepts connections.
func (s *Server) Start() {
	s.t.Helper()
	config := filepath.Join(s.dir, "nats.conf")
	text := fmt.Sprintf("listen: \"127.0.0.1:%d\"\nmax_payload: 2MB\njetstream { store_dir: %q }\n", s.port, filepath.Join(s.dir, "js"))
	if err := os.WriteFile(config, []byte(text), 0o600); err != nil {
		s.t.Fatal(err)
	}
	s.cmd = exec.Command(Binary(s.t), "-c", config)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		nc, err := nats.Connect(s.URL, nats.Timeout(200*time.Millisecond))
		if err == nil {
			nc.Close()
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("nats-server did not start: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop ends the process cleanly (the link is down for every client; JetStream keeps what it
// acknowledged: a SIGKILL could lose the server's own unflushed writes, which is not our test).
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() {
			_ = s.cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
		s.cmd = nil
	}
}

// Site is the site token of the tests' nodes.
const Site = "_t"

// Address is the address the test credentials of node wid at site name ("" : layout 1).
func Address(wid, site string) protocol.Address {
	if site == "" {
		return protocol.Address{Wid: wid}
	}
	sum := sha256.Sum256([]byte(site + "." + wid))
	return protocol.Address{Wid: wid, Site: site, Down: base64.RawURLEncoding.EncodeToString(sum[:16])}
}

// NodeJWT is a node user JWT with the permissions the gateway gives (layout 2 at site, or layout 1
// for site ""), unsigned (the test server has no auth; the agent reads the permissions).
func NodeJWT(wid, site string) string {
	address := Address(wid, site)
	pub := []string{"ef.up." + wid + ".>"}
	sub := []string{address.DownSubject(), address.InboxPrefix() + ".>"}
	if site != "" {
		pub = []string{"ef.up." + site + "." + wid + ".>"}
	}
	part := func(value any) string {
		data, _ := json.Marshal(value)
		return base64.RawURLEncoding.EncodeToString(data)
	}
	return part(map[string]string{"typ": "JWT", "alg": "ed25519-nkey"}) + "." + part(map[string]any{
		"sub":  "node-" + wid,
		"nats": map[string]any{"pub": map[string]any{"allow": pub}, "sub": map[string]any{"allow": sub}, "type": "user", "version": 2},
	}) + ".dGVzdA"
}

// Seed is a fixed user nkey seed for test agents (the server checks no signatures).
const Seed = "SUAMLK2ZNL35WSMW37E7UD4VZ7ELPKW7DHC3BWBSD2GCZ7IUQQXZIORRBU"

// Stored is one message of the EF_UP stream.
type Stored struct {
	Subject string
	Type    string
	Msg     protocol.Message
	Headers nats.Header
}

// Platform stands in for the gateway: answers Hello (on either subject layout) with the delta
// since the agent's revision, publishes live deltas on the downlink of the site the node last said
// Hello from, hands out re-issued credentials, and reads what the agent stored in EF_UP.
type Platform struct {
	t   *testing.T
	nc  *nats.Conn
	js  jetstream.JetStream
	wid string
	Hb  int64
	Mx  int64
	// RQ is what each HelloReply says of reports quieting the heartbeat (set before the agent starts).
	RQ bool

	mu         sync.Mutex
	rev        int64
	changes    []change
	Hellos     []protocol.Hello
	helloSites []string
	site       string
	reissue    string
}

type change struct {
	rev int64
	put *protocol.DesiredPut
	del string
}

// NewPlatform connects to server, creates (and empties) EF_UP, and answers the node's Hellos.
func NewPlatform(t *testing.T, server *Server, wid string) *Platform {
	t.Helper()
	nc, err := nats.Connect(server.URL, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stream, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: "EF_UP", Subjects: []string{"ef.up.*.*.st", "ef.up.*.*.mx", "ef.up.*.*.ack", "ef.up.*.st", "ef.up.*.mx", "ef.up.*.ack"},
		Storage: jetstream.FileStorage,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	p := &Platform{t: t, nc: nc, js: js, wid: wid, Hb: 1, Mx: 1, site: Site}
	for _, subject := range []string{"ef.up.*." + wid + ".hello", "ef.up." + wid + ".hello"} {
		if _, err := nc.Subscribe(subject, p.onHello); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// HelloSites lists the site of each Hello ("" : layout 1).
func (p *Platform) HelloSites() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.helloSites...)
}

// ReissueAtHello makes the node's next HelloReply carry these credentials.
func (p *Platform) ReissueAtHello(jwt string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reissue = jwt
}

// PushCredentials sends a CredentialsUpdate down the node's downlink (a site move).
func (p *Platform) PushCredentials(jwt string) { p.Publish(protocol.CredentialsUpdate{JWT: jwt}) }

// Address is where the node listens: the site it last said Hello from (Site before any Hello).
func (p *Platform) Address() protocol.Address {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Address(p.wid, p.site)
}

func (p *Platform) onHello(msg *nats.Msg) {
	hello, err := protocol.DecodeAs[protocol.Hello](msg.Data)
	if err != nil {
		p.t.Errorf("bad hello: %v", err)
		return
	}
	site := ""
	if tokens := strings.Split(msg.Subject, "."); len(tokens) == 5 {
		site = tokens[2]
	}
	p.mu.Lock()
	p.Hellos = append(p.Hellos, hello)
	p.helloSites = append(p.helloSites, site)
	p.site = site
	reply := protocol.HelloReply{Hb: p.Hb, Mx: p.Mx, JWT: p.reissue, RQ: p.RQ}
	p.reissue = ""
	if hello.Rev < p.rev {
		delta := p.deltaSince(hello.Rev)
		reply.D = &delta
	}
	p.mu.Unlock()
	data, err := protocol.Encode(reply)
	if err != nil {
		p.t.Errorf("encode hello reply: %v", err)
		return
	}
	_ = msg.Respond(data)
}

// deltaSince is every change stamped after rev (p.mu held).
func (p *Platform) deltaSince(rev int64) protocol.DeltaBody {
	delta := protocol.DeltaBody{From: rev, To: p.rev, Put: []protocol.DesiredPut{}, Del: []string{}}
	latest := map[string]change{}
	var order []string
	for _, c := range p.changes {
		if c.rev <= rev {
			continue
		}
		app := c.del
		if c.put != nil {
			app = c.put.App
		}
		if _, seen := latest[app]; !seen {
			order = append(order, app)
		}
		latest[app] = c
	}
	for _, app := range order {
		if c := latest[app]; c.put != nil {
			delta.Put = append(delta.Put, *c.put)
		} else {
			delta.Del = append(delta.Del, app)
		}
	}
	return delta
}

// Put makes app desired at a new revision and publishes the delta live.
func (p *Platform) Put(put protocol.DesiredPut) { p.apply(change{put: &put}) }

// Delete removes app at a new revision.
func (p *Platform) Delete(app string) { p.apply(change{del: app}) }

// Prepare records a change without publishing it (the agent gets it through Hello).
func (p *Platform) Prepare(put protocol.DesiredPut) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rev++
	p.changes = append(p.changes, change{rev: p.rev, put: &put})
}

func (p *Platform) apply(c change) {
	p.mu.Lock()
	from := p.rev
	p.rev++
	c.rev = p.rev
	p.changes = append(p.changes, c)
	delta := p.deltaSince(from)
	p.mu.Unlock()
	p.Publish(protocol.DesiredDelta{DeltaBody: delta})
}

// Publish sends any message to the node's down subject.
func (p *Platform) Publish(msg protocol.Message) {
	data, err := protocol.Encode(msg)
	if err != nil {
		p.t.Fatal(err)
	}
	p.PublishRaw(data)
}

// PublishRaw sends raw bytes to the node's down subject.
func (p *Platform) PublishRaw(data []byte) {
	if err := p.nc.Publish(p.Address().DownSubject(), data); err != nil {
		p.t.Fatal(err)
	}
	_ = p.nc.Flush()
}

// Revision is the platform's current desired revision.
func (p *Platform) Revision() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rev
}

// HelloRevisions lists the revisions the node named in its Hellos.
func (p *Platform) HelloRevisions() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	revs := make([]int64, len(p.Hellos))
	for i, h := range p.Hellos {
		revs[i] = h.Rev
	}
	return revs
}

// DeleteStream removes EF_UP: the hub acknowledges no report from then on.
func (p *Platform) DeleteStream() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.js.DeleteStream(ctx, "EF_UP"); err != nil {
		p.t.Fatalf("delete EF_UP: %v", err)
	}
}

// Stored reads every message of EF_UP, decoded.
func (p *Platform) Stored() []Stored {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stream, err := p.js.Stream(ctx, "EF_UP")
	if err != nil {
		return nil
	}
	info, err := stream.Info(ctx)
	if err != nil || info.State.Msgs == 0 {
		return nil
	}
	var out []Stored
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		raw, err := stream.GetMsg(ctx, seq)
		if err != nil {
			continue
		}
		types := map[string]protocol.MessageType{"st": protocol.TypeStatusReport, "mx": protocol.TypeMetricsReport, "ack": protocol.TypeDesiredAck}
		upType := raw.Subject[len(raw.Subject)-len(lastToken(raw.Subject)):]
		msg, err := protocol.Decode(types[upType], raw.Data)
		if err != nil {
			p.t.Errorf("stored %s does not decode: %v", raw.Subject, err)
			continue
		}
		out = append(out, Stored{Subject: raw.Subject, Type: upType, Msg: msg, Headers: raw.Header})
	}
	return out
}

func lastToken(subject string) string {
	for i := len(subject) - 1; i >= 0; i-- {
		if subject[i] == '.' {
			return subject[i+1:]
		}
	}
	return subject
}

// ApproveEnrollments answers every enrollment request approved, with wids <prefix>0, <prefix>1, …
// (sealed to the requester, after checking its proof of possession, as the gateway does).
func ApproveEnrollments(t *testing.T, server *Server, prefix string) {
	t.Helper()
	nc, err := nats.Connect(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	var mu sync.Mutex
	issued := 0
	_, err = nc.Subscribe(protocol.EnrollSubject, func(msg *nats.Msg) {
		request, err := protocol.DecodeAs[protocol.EnrollRequest](msg.Data)
		if err != nil {
			t.Errorf("bad enrollment request: %v", err)
			return
		}
		mu.Lock()
		wid := fmt.Sprintf("%s%d", prefix, issued)
		issued++
		mu.Unlock()
		reply, err := protocol.SealEnrollReply(protocol.EnrollReplyBody{St: "approved", Nid: "node-" + wid, Wid: wid, Org: "o1", JWT: NodeJWT(wid, Site)}, request.Xk)
		if err != nil {
			t.Error(err)
			return
		}
		data, _ := protocol.Encode(reply)
		_ = msg.Respond(data)
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
}

// AnswerHellos answers every node's Hello with intervals of one second and, for a node at
// revision 0, a delta putting app at revision 1.
func AnswerHellos(t *testing.T, server *Server, put protocol.DesiredPut) {
	t.Helper()
	nc, err := nats.Connect(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	_, err = nc.Subscribe("ef.up.*.*.hello", func(msg *nats.Msg) {
		hello, err := protocol.DecodeAs[protocol.Hello](msg.Data)
		if err != nil {
			t.Errorf("bad hello: %v", err)
			return
		}
		reply := protocol.HelloReply{Hb: 1, Mx: 1}
		if hello.Rev == 0 {
			reply.D = &protocol.DeltaBody{From: 0, To: 1, Put: []protocol.DesiredPut{put}, Del: []string{}}
		}
		data, _ := protocol.Encode(reply)
		_ = msg.Respond(data)
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
}

// Command sends a CommandRequest down to the node and waits for its CommandReply on the node's
// `ef.up.<site>.<wid>.cmd` (what the gateway does on the platform side).
func (p *Platform) Command(request protocol.CommandRequest, timeout time.Duration) (protocol.CommandReply, error) {
	replies := make(chan *nats.Msg, 8)
	address := p.Address()
	sub, err := p.nc.ChanSubscribe(address.UpSubject(protocol.UpCmd), replies)
	if err != nil {
		return protocol.CommandReply{}, err
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := p.nc.Flush(); err != nil {
		return protocol.CommandReply{}, err
	}
	if err := p.nc.Publish(address.DownSubject(), protocol.MustEncode(request)); err != nil {
		return protocol.CommandReply{}, err
	}
	deadline := time.After(timeout)
	for {
		select {
		case msg := <-replies:
			reply, err := protocol.DecodeAs[protocol.CommandReply](msg.Data)
			if err != nil {
				return protocol.CommandReply{}, err
			}
			if reply.ID == request.ID {
				return reply, nil
			}
		case <-deadline:
			return protocol.CommandReply{}, fmt.Errorf("no reply to %s within %s", request.ID, timeout)
		}
	}
}

// Conn is the platform side's connection (to stand in for the gateway in tests: probe answers).
func (p *Platform) Conn() *nats.Conn { return p.nc }
