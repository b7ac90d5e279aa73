package agent

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/outbox"
)

// Files the reference agent wrote (DiskOutbox: st 1, mx 41, ack 7 appended, the first acked;
// FileStateStore.save of a desired app with env, health and an artifact), as hex. A node switching
// from the Node agent to this one keeps its state dir: these must read as they were written.
var referenceFiles = map[string]string{
	"outbox/0000000000000000.seg": "14000000287a5445000000000000000000000000000000f03f01020313000000fa25a9a6000000000000f03f010000000000804440040512000000bbb680b90000000000000040020000000000001c4006",
	"outbox/cursor":               "31",
	"state.json":                  "7b22726576223a372c22736571223a7b227374223a312c226d78223a34317d2c2264657369726564223a7b22726561646572223a7b22766572223a22322e342e30222c2273706563223a7b22636f6d6d616e64223a5b222e2f726561646572222c222d2d706f7274222c2238303831225d2c22656e76223a7b2242223a2232222c2241223a2231227d2c226865616c7468223a7b2268747470223a22687474703a2f2f3132372e302e302e313a383038312f6865616c74687a222c22696e74657276616c5365636f6e6473223a357d2c227265766572744f6e4661696c757265223a747275657d2c22617274223a7b22736861223a2239663836643038313838346337643635396132666561613063353561643031356133626634663162326230623832326364313564366331356230663030613038227d7d7d7d",
}

func TestReadsTheReferenceAgentsStateDir(t *testing.T) {
	dir := t.TempDir()
	for name, content := range referenceFiles {
		data, _ := hex.DecodeString(content)
		_ = os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	box, err := outbox.Open(outbox.Options{Dir: filepath.Join(dir, "outbox"), MaxBytes: 1 << 20, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	records, _ := box.Peek(10)
	if len(records) != 2 || records[0].Type != "mx" || records[0].Key != 41 || records[0].Index != 1 ||
		!bytes.Equal(records[0].Payload, []byte{4, 5}) || records[1].Type != "ack" || records[1].Key != 7 {
		t.Fatalf("outbox records %+v", records)
	}

	statePath := filepath.Join(dir, "state.json")
	state, recovered := LoadState(statePath, time.Now())
	if recovered != nil {
		t.Fatal(recovered)
	}
	reader := state.Desired["reader"]
	if state.Rev != 7 || state.Seq.Mx != 41 || reader.Ver != "2.4.0" || reader.Art.Sha[:8] != "9f86d081" ||
		reader.Spec.Env[0].Key != "B" || *reader.Spec.Health.IntervalSeconds != 5 || !reader.Spec.Reverts() {
		t.Fatalf("state %+v", state)
	}
	// And written back, it is byte for byte what the reference agent writes.
	if err := SaveState(statePath, state); err != nil {
		t.Fatal(err)
	}
	written, _ := os.ReadFile(statePath)
	want, _ := hex.DecodeString(referenceFiles["state.json"])
	if !bytes.Equal(written, want) {
		t.Fatalf("state.json differs\n got %s\nwant %s", written, want)
	}
	var roundTrip State
	if err := json.Unmarshal(written, &roundTrip); err != nil {
		t.Fatal(err)
	}
}
