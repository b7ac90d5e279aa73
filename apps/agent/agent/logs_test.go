package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edgefleet/edgefleet/apps/agent/internal/testnats"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

func i64(v int64) *int64 { return &v }

// A chatty app: a numbered line every 20 ms.
func chattyApp() protocol.DesiredPut {
	return protocol.DesiredPut{App: "chatty", Ver: "1.0", Spec: protocol.RunSpec{
		Command: []string{"sh", "-c", "i=0; while true; do echo line $i; i=$((i+1)); sleep 0.02; done"},
	}}
}

// parts collects the node's replies to one session id.
func parts(t *testing.T, nc *nats.Conn, id string) (<-chan protocol.CommandReply, func()) {
	t.Helper()
	raw := make(chan *nats.Msg, 256)
	sub, err := nc.ChanSubscribe(testnats.Address(wid, testnats.Site).UpSubject(protocol.UpCmd), raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	out := make(chan protocol.CommandReply, 256)
	go func() {
		for msg := range raw {
			reply, err := protocol.DecodeAs[protocol.CommandReply](msg.Data)
			if err == nil && reply.ID == id {
				out <- reply
			}
		}
	}()
	return out, func() { _ = sub.Unsubscribe(); close(raw) }
}

func next(t *testing.T, replies <-chan protocol.CommandReply, within time.Duration) protocol.CommandReply {
	t.Helper()
	select {
	case reply := <-replies:
		return reply
	case <-time.After(within):
		t.Fatalf("no part within %s", within)
		return protocol.CommandReply{}
	}
}

// A session sends its history at once, then only as much as its credit allows, and ends when asked.
func TestALogSessionIsPacedByCreditAndEndsOnCancel(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid)
	platform.Prepare(chattyApp())
	a := startAgent(t, t.TempDir(), server)
	waitFor(t, "chatty running with output", 10*time.Second, func() (bool, bool) {
		status := a.runtime.Instances()
		return true, len(status) == 1 && status[0].St == protocol.StateRunning
	})
	time.Sleep(300 * time.Millisecond)
	nc := platform.Conn()
	replies, stop := parts(t, nc, "s1")
	defer stop()
	send := func(request protocol.CommandRequest) {
		if err := nc.Publish(testnats.Address(wid, testnats.Site).DownSubject(), protocol.MustEncode(request)); err != nil {
			t.Fatal(err)
		}
	}
	follow := true
	send(protocol.CommandRequest{ID: "s1", Cmd: protocol.CmdLogs, App: "chatty", N: i64(5), F: &follow, Bud: i64(1 << 20), Cr: i64(64)})
	first := next(t, replies, 5*time.Second)
	if !first.OK || first.Lg == nil || first.Lg.P != 0 || first.Lg.End != "" {
		t.Fatalf("first part %+v", first)
	}
	sent := 0
	for _, line := range first.Lg.L {
		sent += len(line)
		if !strings.HasPrefix(line, "line ") {
			t.Fatalf("line %q", line)
		}
	}
	if sent > 64 || len(first.Lg.L) == 0 {
		t.Fatalf("part 0 carries %d bytes in %d lines for 64 bytes of credit", sent, len(first.Lg.L))
	}
	// Without more credit, nothing more comes, although the app keeps writing.
	select {
	case extra := <-replies:
		if extra.Lg != nil && len(extra.Lg.L) > 0 && sent+len(strings.Join(extra.Lg.L, "")) > 64 {
			t.Fatalf("sent past its credit: %+v", extra.Lg)
		}
	case <-time.After(500 * time.Millisecond):
	}
	send(protocol.CommandRequest{ID: "s1", Cmd: protocol.CmdCredit, Cr: i64(4096)})
	more := next(t, replies, 5*time.Second)
	if more.Lg == nil || len(more.Lg.L) == 0 || more.Lg.P < 1 {
		t.Fatalf("after credit %+v", more)
	}
	send(protocol.CommandRequest{ID: "s1", Cmd: protocol.CmdCancel})
	deadline := time.After(5 * time.Second)
	for {
		select {
		case reply := <-replies:
			if reply.Lg != nil && reply.Lg.End == protocol.LogEndCancelled {
				// Credit for a session that ended is answered with an end part: the gateway learns it is gone.
				send(protocol.CommandRequest{ID: "s1", Cmd: protocol.CmdCredit, Cr: i64(0)})
				if gone := next(t, replies, 5*time.Second); gone.Lg == nil || gone.Lg.End != protocol.LogEndLapsed {
					t.Fatalf("credit after the end: %+v", gone)
				}
				return
			}
		case <-deadline:
			t.Fatal("no cancelled part")
		}
	}
}

func TestALogSessionStopsAtItsBudgetAndRefusesAnUnknownApp(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid)
	platform.Prepare(chattyApp())
	a := startAgent(t, t.TempDir(), server)
	waitFor(t, "chatty running", 10*time.Second, func() (bool, bool) {
		status := a.runtime.Instances()
		return true, len(status) == 1 && status[0].St == protocol.StateRunning
	})
	unknown, err := platform.Command(protocol.CommandRequest{ID: "u1", Cmd: protocol.CmdLogs, App: "nope", Bud: i64(4096)}, 5*time.Second)
	if err != nil || unknown.OK || unknown.Err != protocol.CmdErrUnknownApp {
		t.Fatalf("unknown app: %+v %v", unknown, err)
	}
	nc := platform.Conn()
	replies, stop := parts(t, nc, "b1")
	defer stop()
	follow := true
	if err := nc.Publish(testnats.Address(wid, testnats.Site).DownSubject(), protocol.MustEncode(protocol.CommandRequest{
		ID: "b1", Cmd: protocol.CmdLogs, App: "chatty", N: i64(0), F: &follow, Bud: i64(200), Cr: i64(65536),
	})); err != nil {
		t.Fatal(err)
	}
	total := 0
	deadline := time.After(10 * time.Second)
	for {
		select {
		case reply := <-replies:
			for _, line := range reply.Lg.L {
				total += len(line)
			}
			if reply.Lg.End == protocol.LogEndBudget {
				if total > 200 {
					t.Fatalf("%d bytes past a 200-byte budget", total)
				}
				return
			}
		case <-deadline:
			t.Fatalf("no budget end (%d bytes so far)", total)
		}
	}
}

func TestProbesToTheLeafAndTheHub(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid)
	startAgent(t, t.TempDir(), server)
	// A command sent before the agent listens on its downlink is lost (core NATS): wait for its Hello.
	waitFor(t, "hello", 10*time.Second, func() (bool, bool) { return true, len(platform.HelloRevisions()) > 0 })
	leaf, err := platform.Command(protocol.CommandRequest{ID: "p1", Cmd: protocol.CmdProbe, To: "leaf", By: i64(256 * 1024), Ms: i64(5000)}, 10*time.Second)
	if err != nil || !leaf.OK || leaf.Prb == nil || leaf.Prb.To != "leaf" || leaf.Prb.By < 256*1024 || leaf.Prb.Ms <= 0 {
		t.Fatalf("leaf probe %+v %v", leaf, err)
	}
	// Nobody answers hub chunks: the probe fails, saying so, within its time bound and the margin.
	started := time.Now()
	silent, err := platform.Command(protocol.CommandRequest{ID: "p2", Cmd: protocol.CmdProbe, To: "hub", By: i64(64 * 1024), Ms: i64(500)}, 10*time.Second)
	if err != nil || silent.OK || silent.Err != protocol.CmdErrFailed || time.Since(started) > 5*time.Second {
		t.Fatalf("unanswered hub probe %+v %v after %s", silent, err, time.Since(started))
	}
	// The gateway's stand-in acknowledges chunks of its own probe only.
	answered := 0
	sub, err := platform.Conn().Subscribe(testnats.Address(wid, testnats.Site).UpSubject(protocol.UpPrb), func(msg *nats.Msg) {
		if strings.HasPrefix(string(msg.Data), "p3\x00") {
			answered++
			_ = msg.Respond(nil)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	hub, err := platform.Command(protocol.CommandRequest{ID: "p3", Cmd: protocol.CmdProbe, To: "hub", By: i64(256 * 1024), Ms: i64(5000)}, 10*time.Second)
	if err != nil || !hub.OK || hub.Prb == nil || hub.Prb.By != int64(answered*protocol.ProbeChunkBytes) || answered != 16 {
		t.Fatalf("hub probe %+v %v, %d chunks answered", hub, err, answered)
	}
}
