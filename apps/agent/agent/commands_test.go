package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/internal/testnats"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

func healthySleeper() protocol.DesiredPut {
	interval := int64(1)
	return protocol.DesiredPut{App: "sleeper", Ver: "1.0", Spec: protocol.RunSpec{
		Command: []string{"sleep", "1000"},
		Health:  &protocol.HealthCheck{Exec: []string{"true"}, IntervalSeconds: &interval},
	}}
}

// Every command through a real nats-server, answered on the node's own `ef.up.<site>.<wid>.cmd`.
func TestCommandsAreAnsweredOnTheNodesOwnSubject(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid)
	platform.Prepare(healthySleeper())
	a := startAgent(t, t.TempDir(), server)
	waitFor(t, "sleeper running", 10*time.Second, func() (bool, bool) {
		status := a.runtime.Instances()
		return true, len(status) == 1 && status[0].St == protocol.StateRunning
	})

	cases := []struct {
		name    string
		request protocol.CommandRequest
		check   func(t *testing.T, reply protocol.CommandReply)
	}{
		{"restart counts a restart", protocol.CommandRequest{Cmd: protocol.CmdRestart, App: "sleeper"}, func(t *testing.T, reply protocol.CommandReply) {
			if !reply.OK || reply.Inst == nil || reply.Inst.Rs != 1 || reply.Inst.St != protocol.StateStarting {
				t.Fatalf("reply %+v inst %+v", reply, reply.Inst)
			}
		}},
		{"health runs the check now", protocol.CommandRequest{Cmd: protocol.CmdHealth, App: "sleeper"}, func(t *testing.T, reply protocol.CommandReply) {
			if !reply.OK || reply.Hl == nil || !reply.Hl.OK {
				t.Fatalf("reply %+v", reply)
			}
		}},
		{"stop holds the app", protocol.CommandRequest{Cmd: protocol.CmdStop, App: "sleeper"}, func(t *testing.T, reply protocol.CommandReply) {
			if !reply.OK || reply.Inst.St != protocol.StateStopped || reply.Inst.Why == nil || *reply.Inst.Why != "stopped by an operator" {
				t.Fatalf("reply %+v inst %+v", reply, reply.Inst)
			}
			time.Sleep(300 * time.Millisecond) // no automatic restart
			if status := a.runtime.Instances()[0]; status.St != protocol.StateStopped {
				t.Fatalf("restarted on its own: %+v", status)
			}
		}},
		{"start runs it again", protocol.CommandRequest{Cmd: protocol.CmdStart, App: "sleeper"}, func(t *testing.T, reply protocol.CommandReply) {
			if !reply.OK || reply.Inst.St == protocol.StateStopped {
				t.Fatalf("reply %+v inst %+v", reply, reply.Inst)
			}
		}},
		{"an unknown app is refused", protocol.CommandRequest{Cmd: protocol.CmdRestart, App: "nope"}, func(t *testing.T, reply protocol.CommandReply) {
			if reply.OK || reply.Err != protocol.CmdErrUnknownApp || !strings.Contains(*reply.Why, "nope") {
				t.Fatalf("reply %+v", reply)
			}
		}},
		{"diagnostics: version, settings, disk, log, apps", protocol.CommandRequest{Cmd: protocol.CmdDiag}, func(t *testing.T, reply protocol.CommandReply) {
			d := reply.Diag
			if !reply.OK || d == nil || d.Av != "0.1.0-test" || d.Dt <= 0 || len(d.Inst) != 1 || len(d.Log) == 0 {
				t.Fatalf("reply %+v diag %+v", reply, d)
			}
			if servers, _ := d.Cfg.Get("servers"); servers != server.URL {
				t.Fatalf("cfg %+v", d.Cfg)
			}
			if !strings.Contains(strings.Join(d.Log, "\n"), "command") {
				t.Fatalf("log %q", d.Log)
			}
		}},
		{"report queues status and metrics", protocol.CommandRequest{Cmd: protocol.CmdReport}, func(t *testing.T, reply protocol.CommandReply) {
			if !reply.OK || reply.Rep == nil || reply.Rep.St < 1 || reply.Rep.Mx < 1 {
				t.Fatalf("reply %+v", reply)
			}
		}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.request.ID = "t" + string(rune('a'+i))
			reply, err := platform.Command(c.request, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, reply)
		})
	}
}

func TestDownlinkTellsCommandsFromDeltas(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		want protocol.MessageType
	}{
		{"command", protocol.MustEncode(protocol.CommandRequest{ID: "a", Cmd: protocol.CmdDiag}), protocol.TypeCommandRequest},
		{"delta", protocol.MustEncode(protocol.DesiredDelta{DeltaBody: protocol.DeltaBody{Put: []protocol.DesiredPut{}, Del: []string{}}}), protocol.TypeDesiredDelta},
		{"garbage", []byte{0xc1}, protocol.TypeDesiredDelta},
		{"empty", nil, protocol.TypeDesiredDelta},
	}
	for _, c := range cases {
		if got := protocol.DownlinkMessageType(c.data); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestADiagnosticsBundleIsTrimmedToItsLimit(t *testing.T) {
	long := strings.Repeat("x", protocol.DiagMaxLogLineChars)
	log := make([]string, protocol.DiagMaxLogLines)
	for i := range log {
		log[i] = long
	}
	// 200 lines of 512 characters with 4-byte runes would be 400 KiB: over the 128 KiB limit.
	for i := range log {
		log[i] = strings.Repeat("𝄞", protocol.DiagMaxLogLineChars/2)
	}
	reply := protocol.CommandReply{ID: "d", OK: true, Diag: &protocol.Diagnostics{Av: "1", OS: "linux", Arch: "x64", Cfg: protocol.StringMap{}, Log: log, Inst: []protocol.InstanceStatus{}}}
	payload := encodeCommandReply(reply)
	if len(payload) > protocol.CommandReplyLimit {
		t.Fatalf("%d bytes", len(payload))
	}
	decoded, err := protocol.DecodeAs[protocol.CommandReply](payload)
	if err != nil || !decoded.OK || len(decoded.Diag.Log) == 0 || len(decoded.Diag.Log) >= len(log) {
		t.Fatalf("decoded %+v, %v", decoded, err)
	}
	if got := clipText(long+"yz", 10); len([]rune(got)) != 10 || !strings.HasSuffix(got, "…") {
		t.Fatalf("clip %q", got)
	}
}
