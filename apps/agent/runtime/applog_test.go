package runtime

import (
	"strings"
	"testing"

	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

func TestAppLogSanitizesAndBoundsLines(t *testing.T) {
	log := NewAppLog(4096)
	var heard []string
	log.Subscribe(func(line LogLine) { heard = append(heard, line.Text) })
	_, _ = log.Write([]byte("plain\r\nbin\x00\x01\x02\x03\x04\x05\x06\x07\n\x1b[31mred\x1b[0m\tx\n"))
	_, _ = log.Write([]byte(strings.Repeat("y", 10_000)))
	_, _ = log.Write([]byte("\ninvalid \xff utf8\n"))
	want := []string{"plain", "[binary output: 11 bytes not shown]", "red\tx"}
	for i, w := range want {
		if heard[i] != w {
			t.Fatalf("line %d: %q, want %q", i, heard[i], w)
		}
	}
	huge := heard[3]
	if len(huge) > protocol.LogMaxLineBytes+64 || !strings.HasSuffix(huge, "bytes cut]") || !strings.Contains(huge, "7952 bytes cut") {
		t.Fatalf("huge line: %d bytes, ends %q", len(huge), huge[len(huge)-30:])
	}
	if heard[4] != "invalid \uFFFD utf8" {
		t.Fatalf("invalid utf8: %q", heard[4])
	}
	// The ring keeps at most its capacity: the 2 KiB line and the rest fit, then push them out.
	for i := 0; i < 500; i++ {
		log.Append("filler line")
	}
	tail := log.Tail(10_000)
	bytes := 0
	for _, line := range tail {
		bytes += line.Bytes
	}
	if bytes > 4096 || tail[len(tail)-1].Text != "filler line" || tail[0].Seq <= 5 {
		t.Fatalf("ring holds %d bytes, first seq %d", bytes, tail[0].Seq)
	}
}
