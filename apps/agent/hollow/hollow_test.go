package hollow

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/internal/testnats"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

func TestAHollowFleetEnrollsAndSpeaksTheRealProtocol(t *testing.T) {
	server := testnats.Start(t)
	// Creates EF_UP; its own Hello answers are for a node outside the fleet.
	platform := testnats.NewPlatform(t, server, "zz")
	testnats.ApproveEnrollments(t, server, "h")
	sha := strings.Repeat("ab", 32)
	testnats.AnswerHellos(t, server, protocol.DesiredPut{App: "reader", Ver: "1.0", Spec: protocol.RunSpec{Command: []string{"run"}}, Art: &protocol.ArtifactRef{Sha: sha}})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fleet, err := Start(ctx, Options{Count: 5, Token: "t", Servers: []string{server.URL}, NamePrefix: "hollow",
		AgentVersion: "0.1.0", OS: "linux", Arch: "x64", Heartbeat: time.Second, Metrics: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Stop()
	if len(fleet.Agents) != 5 || fleet.Identities[4].Wid == "" {
		t.Fatalf("fleet %+v", fleet.Identities)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		running := map[string]bool{}
		for _, stored := range platform.Stored() {
			if report, ok := stored.Msg.(protocol.StatusReport); ok && len(report.Inst) == 1 && report.Inst[0].St == protocol.StateRunning {
				running[stored.Subject] = true
			}
		}
		if len(running) == 5 && fleet.Connected() == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("running reported by %d of 5 agents", len(running))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The simulated pull was reported on the way (half, then all of 1 MiB).
	pulled := false
	for _, stored := range platform.Stored() {
		if report, ok := stored.Msg.(protocol.StatusReport); ok && len(report.Inst) == 1 && report.Inst[0].St == protocol.StatePulling {
			pulled = pulled || *report.Inst[0].Pt == 1<<20
		}
	}
	if !pulled {
		t.Fatal("no pulling status")
	}
}
