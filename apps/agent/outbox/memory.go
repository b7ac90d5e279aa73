package outbox

import (
	"fmt"
	"slices"
	"sync"
)

// Memory is the outbox of hollow agents (their node is simulated, the wire protocol is real):
// the same contract in memory, bounded, oldest metrics evicted first.
type Memory struct {
	mu        sync.Mutex
	records   []Record
	nextIndex int64
	bytes     int64
	maxBytes  int64
	evicted   int
}

// NewMemory returns an in-memory outbox of at most maxBytes of payload.
func NewMemory(maxBytes int64) *Memory { return &Memory{maxBytes: maxBytes} }

// Append buffers one record.
func (m *Memory) Append(recordType string, key int64, payload []byte) error {
	if typeByte(recordType) < 0 {
		return fmt.Errorf("outbox: unknown record type %q", recordType)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records = append(m.records, Record{Index: m.nextIndex, Type: recordType, Key: key, Payload: payload})
	m.nextIndex++
	m.bytes += int64(len(payload))
	for m.bytes > m.maxBytes && len(m.records) > 1 {
		at := max(slices.IndexFunc(m.records, func(r Record) bool { return r.Type == "mx" }), 0)
		m.bytes -= int64(len(m.records[at].Payload))
		m.records = slices.Delete(m.records, at, at+1)
		m.evicted++
	}
	return nil
}

// Peek returns up to max of the oldest records.
func (m *Memory) Peek(max int) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.records[:min(max, len(m.records))]), nil
}

// Ack drops every record up to and including index.
func (m *Memory) Ack(index int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for len(m.records) > 0 && m.records[0].Index <= index {
		m.bytes -= int64(len(m.records[0].Payload))
		m.records = m.records[1:]
	}
	return nil
}

// Stats counts what waits.
func (m *Memory) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Stats{Records: len(m.records), Bytes: m.bytes, Evicted: m.evicted}
}

// Close does nothing.
func (m *Memory) Close() error { return nil }
