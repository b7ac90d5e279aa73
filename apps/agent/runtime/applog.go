package runtime

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// LogLine is one line of an app's output, numbered so a reader can tell what it missed.
type LogLine struct {
	Seq   int64
	Text  string
	Bytes int
}

// AppLog is an app's recent output (stdout and stderr together) as a ring of sanitized lines
// bounded in bytes: what live log sessions start from and follow (app-log.ts on the TypeScript
// side). It is an io.Writer: the process's output goes through it to the output log file.
type AppLog struct {
	mu        sync.Mutex
	capacity  int
	lines     []LogLine
	bytes     int
	nextSeq   int64
	partial   []byte
	dropped   int
	listeners map[int]func(LogLine)
	nextID    int
}

// NewAppLog makes a ring of capacity bytes (protocol.AppLogRingBytes when 0).
func NewAppLog(capacity int) *AppLog {
	if capacity <= 0 {
		capacity = protocol.AppLogRingBytes
	}
	return &AppLog{capacity: capacity, nextSeq: 1, listeners: map[int]func(LogLine){}}
}

// Write takes raw output in any chunking; it never fails (the app must not notice the ring).
func (l *AppLog) Write(chunk []byte) (int, error) {
	n := len(chunk)
	var done []LogLine
	l.mu.Lock()
	for {
		newline := bytes.IndexByte(chunk, '\n')
		if newline < 0 {
			break
		}
		done = append(done, l.takePartial(chunk[:newline]))
		chunk = chunk[newline+1:]
	}
	if len(chunk) > 0 {
		room := protocol.LogMaxLineBytes*2 - len(l.partial)
		if room > 0 {
			keep := min(room, len(chunk))
			l.partial = append(l.partial, chunk[:keep]...)
			l.dropped += len(chunk) - keep
		} else {
			l.dropped += len(chunk)
		}
		if len(l.partial)+l.dropped > protocol.LogMaxLineBytes*64 {
			done = append(done, l.takePartial(nil))
		}
	}
	listeners := l.snapshotListeners()
	l.mu.Unlock()
	for _, line := range done {
		for _, listener := range listeners {
			listener(line)
		}
	}
	return n, nil
}

// Append adds a line the agent writes itself (a hollow app's output).
func (l *AppLog) Append(text string) {
	_, _ = l.Write([]byte(strings.ReplaceAll(text, "\n", " ") + "\n"))
}

// Tail is the last count lines, oldest first.
func (l *AppLog) Tail(count int) []LogLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := max(0, len(l.lines)-count)
	return append([]LogLine(nil), l.lines[start:]...)
}

// Subscribe calls listener with every new line (outside the ring's lock); returns the unsubscribe.
func (l *AppLog) Subscribe(listener func(LogLine)) func() {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := l.nextID
	l.nextID++
	l.listeners[id] = listener
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.listeners, id)
	}
}

func (l *AppLog) snapshotListeners() []func(LogLine) {
	out := make([]func(LogLine), 0, len(l.listeners))
	for _, listener := range l.listeners {
		out = append(out, listener)
	}
	return out
}

// takePartial completes the current line with rest; called with the lock held.
func (l *AppLog) takePartial(rest []byte) LogLine {
	raw := append(l.partial, rest...)
	if len(raw) > protocol.LogMaxLineBytes*2 {
		l.dropped += len(raw) - protocol.LogMaxLineBytes*2
		raw = raw[:protocol.LogMaxLineBytes*2]
	}
	text := SanitizeLogLine(raw, l.dropped)
	l.partial = nil
	l.dropped = 0
	line := LogLine{Seq: l.nextSeq, Text: text, Bytes: len(text)}
	l.nextSeq++
	l.lines = append(l.lines, line)
	l.bytes += line.Bytes
	drop := 0
	for l.bytes > l.capacity && drop < len(l.lines)-1 {
		l.bytes -= l.lines[drop].Bytes
		drop++
	}
	if drop > 0 {
		l.lines = append(l.lines[:0:0], l.lines[drop:]...)
	}
	return line
}

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;?]*[ -/]*[@-~]")

// SanitizeLogLine makes one line of output safe to show and send (sanitizeLogLine in app-log.ts):
// invalid UTF-8 becomes U+FFFD, a trailing CR and control characters (but tab) go, a mostly binary
// line becomes a note of its size, and a line over LogMaxLineBytes is cut saying how much.
func SanitizeLogLine(raw []byte, alreadyDropped int) string {
	raw = bytes.TrimSuffix(raw, []byte{'\r'})
	sample := raw[:min(len(raw), 512)]
	binary := 0
	for _, b := range sample {
		if (b < 0x20 && b != '\t' && b != 0x1b) || b == 0x7f {
			binary++
		}
	}
	if len(sample) > 0 && binary*10 > len(sample) {
		return fmt.Sprintf("[binary output: %d bytes not shown]", len(raw)+alreadyDropped)
	}
	text := strings.ToValidUTF8(string(raw), "\uFFFD")
	text = ansiEscape.ReplaceAllString(text, "")
	text = strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\t') || r == 0x7f {
			return -1
		}
		return r
	}, text)
	dropped := alreadyDropped
	if len(text) > protocol.LogMaxLineBytes {
		cut := text[:protocol.LogMaxLineBytes]
		for len(cut) > 0 && !utf8.ValidString(cut) {
			cut = cut[:len(cut)-1]
		}
		dropped += len(text) - len(cut)
		text = cut
	}
	if dropped > 0 {
		return fmt.Sprintf("%s …[%d bytes cut]", text, dropped)
	}
	return text
}
