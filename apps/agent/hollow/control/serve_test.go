package control

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edgefleet/edgefleet/apps/agent/internal/testnats"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// message is any reply as the driver sees it.
type message struct {
	Type      string     `json:"type"`
	Message   string     `json:"message"`
	Nodes     []NodeTime `json:"nodes"`
	Watched   int        `json:"watched"`
	Failures  int        `json:"failures"`
	Enrolled  int        `json:"enrolled"`
	Started   int        `json:"started"`
	Connected int        `json:"connected"`
	Delivered int64      `json:"delivered"`
	// raw is the line as written.
	raw string
}

// driver plays the benchmark's side of Serve over pipes.
type driver struct {
	t        *testing.T
	commands *io.PipeWriter
	replies  chan message // every reply but progress
	served   chan error

	mu       sync.Mutex
	progress message
}

func startDriver(t *testing.T, options Options) *driver {
	t.Helper()
	commandsIn, commands := io.Pipe()
	replies, repliesOut := io.Pipe()
	d := &driver{t: t, commands: commands, replies: make(chan message, 64), served: make(chan error, 1)}
	go func() {
		d.served <- Serve(context.Background(), commandsIn, repliesOut, options)
		repliesOut.Close()
	}()
	go func() {
		scanner := bufio.NewScanner(replies)
		scanner.Buffer(nil, 1<<20)
		for scanner.Scan() {
			reply := message{raw: scanner.Text()}
			if err := json.Unmarshal(scanner.Bytes(), &reply); err != nil {
				t.Errorf("reply %q is not JSON: %v", scanner.Text(), err)
				continue
			}
			if reply.Type == "progress" {
				d.mu.Lock()
				d.progress = reply
				d.mu.Unlock()
				continue
			}
			d.replies <- reply
		}
		close(d.replies)
	}()
	t.Cleanup(func() {
		commands.Close()
		select {
		case <-d.served:
		case <-time.After(20 * time.Second):
			t.Error("Serve did not return after its input closed")
		}
	})
	if reply := d.next(); reply.Type != "ready" {
		t.Fatalf("first reply %+v, want ready", reply)
	}
	return d
}

func (d *driver) send(line string) {
	d.t.Helper()
	if _, err := io.WriteString(d.commands, line+"\n"); err != nil {
		d.t.Fatal(err)
	}
}

func (d *driver) next() message {
	d.t.Helper()
	select {
	case reply := <-d.replies:
		return reply
	case <-time.After(30 * time.Second):
		d.t.Fatal("no reply within 30 s")
		return message{}
	}
}

// request sends a command and waits for its reply of type want.
func (d *driver) request(line, want string) message {
	d.t.Helper()
	d.send(line)
	reply := d.next()
	if reply.Type != want {
		d.t.Fatalf("%s: got %+v, want %s", line, reply, want)
	}
	return reply
}

func (d *driver) lastProgress() message {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.progress
}

func TestServeAnswersEachCommandWithItsReply(t *testing.T) {
	d := startDriver(t, Options{})
	tests := []struct {
		line string
		// want is the reply's type and a part of its text.
		want, text string
	}{
		{`{"type":"stop","nids":["unknown"]}`, "stopped", `"nodes":[]`},
		{`{"type":"restart","nids":["unknown"]}`, "restarted", `"nodes":[]`},
		{`{"type":"watch-hellos","timeoutMs":0}`, "hellos", `"watched":0`},
		{`{"type":"connect","perSecond":10,"maxInFlight":1}`, "started", `"nodes":[]`},
		{`{"type":"deliveries"}`, "error", "deliveries: not supported by the Go generator"},
		{`{"type":"behaviours","table":{}}`, "error", "not supported by the Go generator"},
		{`{"type":"connect","perSecond":-1,"maxInFlight":1}`, "error", "perSecond must be above 0"},
		{`not json`, "error", "not a JSON command"},
		{`{"type":"enroll","count":1,"token":"t","natsUrl":"nats://127.0.0.1:1","namePrefix":"p","concurrency":1}`, "error", "enroll: connect to nats://127.0.0.1:1"},
	}
	for _, test := range tests {
		d.send(test.line)
		reply := d.next()
		if reply.Type != test.want || !strings.Contains(reply.raw, test.text) {
			t.Errorf("%s: got %s, want %s with %q", test.line, reply.raw, test.want, test.text)
		}
	}
	d.send(`{"type":"shutdown"}`)
	select {
	case err := <-d.served:
		if err != nil {
			t.Fatal(err)
		}
		d.served <- nil
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after shutdown")
	}
}

// helloRevisions records, per node wid, the revision each of its Hellos named.
func helloRevisions(t *testing.T, server *testnats.Server) func(wid string) []int64 {
	t.Helper()
	nc, err := nats.Connect(server.URL, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	var mu sync.Mutex
	revisions := map[string][]int64{}
	if _, err := nc.Subscribe("ef.up.*.*.hello", func(msg *nats.Msg) {
		hello, err := protocol.DecodeAs[protocol.Hello](msg.Data)
		if err != nil {
			t.Errorf("bad hello: %v", err)
			return
		}
		wid := strings.Split(msg.Subject, ".")[3]
		mu.Lock()
		revisions[wid] = append(revisions[wid], hello.Rev)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	return func(wid string) []int64 {
		mu.Lock()
		defer mu.Unlock()
		return append([]int64(nil), revisions[wid]...)
	}
}

func TestADrivenFleetEnrollsConnectsResyncsAndChurns(t *testing.T) {
	server := testnats.Start(t)
	testnats.NewPlatform(t, server, "zz") // EF_UP, for the reports' PubAcks
	testnats.ApproveEnrollments(t, server, "h")
	testnats.AnswerHellos(t, server, protocol.DesiredPut{App: "reader", Ver: "1.0", Spec: protocol.RunSpec{Command: []string{"run"}}})
	hellos := helloRevisions(t, server)
	d := startDriver(t, Options{AgentVersion: "0.1.0", OS: "linux", Arch: "x64", Heartbeat: time.Second, Metrics: time.Second})

	enrolled := d.request(`{"type":"enroll","firstIndex":4,"count":3,"natsUrl":"`+server.URL+`","agentUrls":["`+server.URL+`"],"agentTokens":["a","b"],"namePrefix":"scale","concurrency":2}`, "enrolled")
	var body struct {
		Nodes []NodeName `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(enrolled.raw), &body); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, n := range body.Nodes {
		names[n.Name] = true
	}
	if enrolled.Failures != 0 || len(body.Nodes) != 3 || !names["scale-4"] || !names["scale-6"] {
		t.Fatalf("enrolled %s", enrolled.raw)
	}
	nid := body.Nodes[0].Nid

	started := d.request(`{"type":"connect","perSecond":100,"maxInFlight":2}`, "started")
	if len(started.Nodes) != 3 || started.Nodes[0].At < time.Now().Add(-time.Minute).UnixMilli() {
		t.Fatalf("started %s", started.raw)
	}
	waitFor(t, "3 connected and reports delivered", func() bool {
		p := d.lastProgress()
		return p.Enrolled == 3 && p.Started == 3 && p.Connected == 3 && p.Delivered > 0
	})

	// A server restart: every agent reconnects and its Hello is answered again.
	d.send(`{"type":"watch-hellos","timeoutMs":30000}`)
	time.Sleep(300 * time.Millisecond)
	server.Stop()
	server.Start()
	resynced := d.next()
	if resynced.Type != "hellos" || resynced.Watched != 3 || len(resynced.Nodes) != 3 {
		t.Fatalf("after the restart: %s", resynced.raw)
	}

	// Churn: a stopped node restarts from its applied revision (no full re-list).
	wid := "h" + strings.TrimPrefix(nid, "node-h")
	stopped := d.request(`{"type":"stop","nids":["`+nid+`","unknown"]}`, "stopped")
	if len(stopped.Nodes) != 1 || stopped.Nodes[0].Nid != nid {
		t.Fatalf("stopped %s", stopped.raw)
	}
	waitFor(t, "2 started", func() bool { return d.lastProgress().Started == 2 })
	before := len(hellos(wid))
	restarted := d.request(`{"type":"restart","nids":["`+nid+`","`+body.Nodes[1].Nid+`"]}`, "restarted")
	if len(restarted.Nodes) != 1 || restarted.Nodes[0].Nid != nid {
		t.Fatalf("restarted %s (the other node runs already)", restarted.raw)
	}
	waitFor(t, "the restarted agent's Hello", func() bool { return len(hellos(wid)) > before })
	if revisions := hellos(wid); revisions[0] != 0 || revisions[len(revisions)-1] != 1 {
		t.Fatalf("the node's Hellos named revisions %v: want 0 at the first start, 1 after the restart", revisions)
	}
	waitFor(t, "3 connected again", func() bool { return d.lastProgress().Connected == 3 })

	d.send(`{"type":"shutdown"}`)
	select {
	case err := <-d.served:
		if err != nil {
			t.Fatal(err)
		}
		d.served <- nil
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after shutdown")
	}
}

func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 20 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
