package outbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func open(t *testing.T, dir string, maxBytes, segmentBytes int64) *Outbox {
	t.Helper()
	o, err := Open(Options{Dir: dir, MaxBytes: maxBytes, SegmentBytes: segmentBytes, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close() })
	return o
}

func appendAll(t *testing.T, o *Outbox, records ...Record) {
	t.Helper()
	for _, r := range records {
		if err := o.Append(r.Type, r.Key, r.Payload); err != nil {
			t.Fatal(err)
		}
	}
}

func keys(records []Record) string {
	out := ""
	for _, r := range records {
		out += fmt.Sprintf("%s%d ", r.Type, r.Key)
	}
	return out
}

func TestRecordsLeaveOnlyWhenAcknowledgedAndSurviveRestarts(t *testing.T) {
	dir := t.TempDir()
	o := open(t, dir, 1<<20, 64)
	appendAll(t, o, Record{Type: "st", Key: 1, Payload: []byte("status-1")},
		Record{Type: "mx", Key: 1, Payload: []byte("metrics-1")},
		Record{Type: "ack", Key: 7, Payload: []byte("ack-7")})
	batch, err := o.Peek(2)
	if err != nil || keys(batch) != "st1 mx1 " {
		t.Fatalf("peek: %q %v", keys(batch), err)
	}
	if err := o.Ack(batch[0].Index); err != nil {
		t.Fatal(err)
	}
	_ = o.Close()

	// A restart (without the ack of the second): the rest comes back, in order.
	again := open(t, dir, 1<<20, 64)
	rest, _ := again.Peek(10)
	if keys(rest) != "mx1 ack7 " || !bytes.Equal(rest[1].Payload, []byte("ack-7")) {
		t.Fatalf("after restart: %q", keys(rest))
	}
	appendAll(t, again, Record{Type: "st", Key: 2, Payload: []byte("status-2")})
	all, _ := again.Peek(10)
	if keys(all) != "mx1 ack7 st2 " || all[2].Index != 3 {
		t.Fatalf("append after restart: %q (index %d)", keys(all), all[2].Index)
	}
	if err := again.Ack(all[2].Index); err != nil {
		t.Fatal(err)
	}
	if stats := again.Stats(); stats.Records != 0 || stats.Bytes != 0 {
		t.Fatalf("everything delivered, yet %+v", stats)
	}
	segments, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(segments) != 0 {
		t.Fatalf("delivered segments left on disk: %v", segments)
	}
}

func TestTornAndCorruptTailsAreCutOff(t *testing.T) {
	cases := []struct {
		name   string
		damage func(data []byte) []byte
		want   string
	}{
		{"torn mid-record", func(data []byte) []byte { return data[:len(data)-3] }, "st1 st2 "},
		{"flipped byte in the last record", func(data []byte) []byte { data[len(data)-1] ^= 0xff; return data }, "st1 st2 "},
		{"garbage appended", func(data []byte) []byte { return append(data, 1, 2, 3, 4, 5, 6, 7, 8, 9) }, "st1 st2 st3 "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			o := open(t, dir, 1<<20, 1<<10)
			appendAll(t, o, Record{Type: "st", Key: 1, Payload: []byte("a")}, Record{Type: "st", Key: 2, Payload: []byte("b")},
				Record{Type: "st", Key: 3, Payload: []byte("c")})
			_ = o.Close()
			segments, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
			data, _ := os.ReadFile(segments[0])
			if err := os.WriteFile(segments[0], c.damage(data), 0o600); err != nil {
				t.Fatal(err)
			}
			reopened := open(t, dir, 1<<20, 1<<10)
			records, _ := reopened.Peek(10)
			if keys(records) != c.want {
				t.Fatalf("got %q, want %q", keys(records), c.want)
			}
			// New records go after the intact part and are read back.
			appendAll(t, reopened, Record{Type: "ack", Key: 9, Payload: []byte("z")})
			records, _ = reopened.Peek(10)
			if keys(records) != c.want+"ack9 " {
				t.Fatalf("after append: %q", keys(records))
			}
		})
	}
}

func TestCorruptCursorResendsRatherThanLoses(t *testing.T) {
	dir := t.TempDir()
	o := open(t, dir, 1<<20, 1<<10)
	appendAll(t, o, Record{Type: "st", Key: 1, Payload: []byte("a")}, Record{Type: "mx", Key: 1, Payload: []byte("b")})
	_ = o.Close()
	if err := os.WriteFile(filepath.Join(dir, "cursor"), []byte("not a number"), 0o600); err != nil {
		t.Fatal(err)
	}
	records, _ := open(t, dir, 1<<20, 1<<10).Peek(10)
	if keys(records) != "st1 mx1 " {
		t.Fatalf("got %q", keys(records))
	}
}

func TestOverTheCapTheOldestMetricsGoFirst(t *testing.T) {
	evicted := map[string]int{}
	o, err := Open(Options{Dir: t.TempDir(), MaxBytes: 4 * 256, SegmentBytes: 256, NoSync: true,
		OnEvict: func(count int, recordType string) { evicted[recordType] += count }})
	if err != nil {
		t.Fatal(err)
	}
	payload := bytes.Repeat([]byte("x"), 40)
	appendAll(t, o, Record{Type: "st", Key: 1, Payload: payload}, Record{Type: "ack", Key: 1, Payload: payload})
	for seq := int64(1); seq <= 40; seq++ {
		appendAll(t, o, Record{Type: "mx", Key: seq, Payload: payload})
	}
	stats := o.Stats()
	if stats.Bytes > 4*256 || stats.Evicted == 0 || evicted["mx"] != stats.Evicted {
		t.Fatalf("cap not kept by evicting metrics: %+v %v", stats, evicted)
	}
	records, _ := o.Peek(100)
	if len(records) < 2 || records[0].Type != "st" || records[1].Type != "ack" {
		t.Fatalf("status and ack must survive: %q", keys(records))
	}
	last := records[len(records)-1]
	if last.Type != "mx" || last.Key != 40 {
		t.Fatalf("the newest metrics must survive: %q", keys(records))
	}
}

func TestOnlyStatusAndAcksOverTheCapDropsTheOldestSegment(t *testing.T) {
	o := open(t, t.TempDir(), 4*128, 128)
	payload := bytes.Repeat([]byte("s"), 60)
	for seq := int64(1); seq <= 30; seq++ {
		appendAll(t, o, Record{Type: "st", Key: seq, Payload: payload})
	}
	stats := o.Stats()
	records, _ := o.Peek(100)
	if stats.Bytes > 4*128 || records[len(records)-1].Key != 30 || stats.Evicted != 30-len(records) {
		t.Fatalf("stats %+v, records %q", stats, keys(records))
	}
}

func TestAFullDiskLosesNothingAlreadyBuffered(t *testing.T) {
	dir := t.TempDir()
	// One record per segment, so the third append opens a new segment file: make it the full disk.
	o := open(t, dir, 1<<20, 1)
	appendAll(t, o, Record{Type: "st", Key: 1, Payload: []byte("a")}, Record{Type: "mx", Key: 1, Payload: []byte("b")})
	full := o.segmentPath(2)
	if err := os.Symlink("/dev/full", full); err != nil {
		t.Fatal(err)
	}
	err := o.Append("mx", 2, []byte("c"))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("want ENOSPC, got %v", err)
	}
	// Space comes back (the failed segment is gone): the next record is buffered as usual.
	_ = os.Remove(full)
	appendAll(t, o, Record{Type: "st", Key: 2, Payload: []byte("d")})
	records, _ := o.Peek(10)
	if keys(records) != "st1 mx1 st2 " {
		t.Fatalf("got %q", keys(records))
	}
	_ = o.Close()
	records, _ = open(t, dir, 1<<20, 1).Peek(10)
	if keys(records) != "st1 mx1 st2 " {
		t.Fatalf("after restart: %q", keys(records))
	}
}

func TestRefusesACapBelowFourSegments(t *testing.T) {
	if _, err := Open(Options{Dir: t.TempDir(), MaxBytes: 1000, SegmentBytes: 1000}); err == nil {
		t.Fatal("accepted")
	}
}

func TestMemoryOutboxKeepsTheContract(t *testing.T) {
	m := NewMemory(100)
	payload := bytes.Repeat([]byte("x"), 30)
	for _, r := range []Record{{Type: "st", Key: 1}, {Type: "mx", Key: 1}, {Type: "mx", Key: 2}, {Type: "ack", Key: 3}} {
		if err := m.Append(r.Type, r.Key, payload); err != nil {
			t.Fatal(err)
		}
	}
	records, _ := m.Peek(10)
	if keys(records) != "st1 mx2 ack3 " || m.Stats().Evicted != 1 {
		t.Fatalf("over the cap the oldest metrics go: %q %+v", keys(records), m.Stats())
	}
	_ = m.Ack(records[1].Index)
	if rest, _ := m.Peek(10); keys(rest) != "ack3 " {
		t.Fatalf("after ack: %q", keys(rest))
	}
	if err := m.Append("bogus", 1, nil); err == nil {
		t.Fatal("unknown type accepted")
	}
}
