// Package outbox is the agent's bounded on-disk buffer of status, metrics and acks: records leave
// only after their JetStream PubAck, survive restarts, and past the cap the oldest metrics go
// first. The files are the reference agent's (disk-outbox.ts), so a node can switch agents.
package outbox

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Record layout (little endian): u32 body length, u32 CRC-32 of the body, body = f64 index,
// u8 type, f64 key, payload. The CRC finds a record torn by a crash mid-write; such a tail is cut
// off when the outbox is reopened.
const (
	headerBytes    = 8
	bodyFixedBytes = 17
	segmentSuffix  = ".seg"
	cursorFile     = "cursor"
)

// Types are the durable up types in the order of their byte in a record (DURABLE_UP_TYPES).
var Types = []string{"st", "mx", "ack"}

// Record is one durable up message waiting for its PubAck.
type Record struct {
	// Position in the outbox, increasing by one per append.
	Index int64
	Type  string
	// Sequence (st, mx) or revision (ack): what the inventory deduplicates on.
	Key     int64
	Payload []byte
}

// Stats describe what waits in the outbox.
type Stats struct {
	Records int
	Bytes   int64
	// Records dropped to respect the cap since the outbox was opened.
	Evicted int
}

// Options of an outbox.
type Options struct {
	Dir string
	// Cap on all segment files together; past it, the oldest metrics go first.
	MaxBytes int64
	// A segment is closed for appends past this size (default 64 KiB).
	SegmentBytes int64
	// NoSync skips the fdatasync after each append (tests).
	NoSync bool
	// OnEvict is told how many records of which type ("mx" or "mixed") were dropped.
	OnEvict func(count int, recordType string)
}

type segment struct {
	path    string
	indexes []int64
	bytes   int64
	metrics int
}

func (s *segment) last() int64 {
	if len(s.indexes) == 0 {
		return -1
	}
	return s.indexes[len(s.indexes)-1]
}

// Outbox is safe for concurrent use.
type Outbox struct {
	mu        sync.Mutex
	options   Options
	segments  []*segment
	active    *os.File
	nextIndex int64
	cursor    int64
	evicted   int
}

// Open loads the outbox in dir, cutting off a torn tail and dropping delivered segments.
func Open(options Options) (*Outbox, error) {
	if options.SegmentBytes == 0 {
		options.SegmentBytes = 64 * 1024
	}
	if options.MaxBytes < 4*options.SegmentBytes {
		return nil, fmt.Errorf("outbox cap %d is below 4 segments (%d bytes)", options.MaxBytes, 4*options.SegmentBytes)
	}
	o := &Outbox{options: options}
	if err := o.load(); err != nil {
		return nil, fmt.Errorf("open outbox %s: %w", options.Dir, err)
	}
	return o, nil
}

func (o *Outbox) load() error {
	if err := os.MkdirAll(o.options.Dir, 0o700); err != nil {
		return err
	}
	// A missing or unreadable cursor means nothing was acknowledged yet: records are sent again
	// and the inventory drops what it has by their sequence.
	if text, err := os.ReadFile(filepath.Join(o.options.Dir, cursorFile)); err == nil {
		if cursor, err := strconv.ParseInt(strings.TrimSpace(string(text)), 10, 64); err == nil && cursor >= 0 {
			o.cursor = cursor
		}
	}
	entries, err := os.ReadDir(o.options.Dir)
	if err != nil {
		return err
	}
	var names []string
	for _, entry := range entries {
		if strings.HasSuffix(entry.Name(), segmentSuffix) {
			names = append(names, entry.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(o.options.Dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		records, valid := parseRecords(data)
		if valid < len(data) {
			if err := os.Truncate(path, int64(valid)); err != nil {
				return err
			}
		}
		if len(records) == 0 || records[len(records)-1].Index < o.cursor {
			_ = os.Remove(path)
			continue
		}
		seg := &segment{path: path, bytes: int64(valid)}
		for _, record := range records {
			seg.indexes = append(seg.indexes, record.Index)
			if record.Type == "mx" {
				seg.metrics++
			}
		}
		o.segments = append(o.segments, seg)
	}
	o.nextIndex = o.cursor
	if n := len(o.segments); n > 0 {
		o.nextIndex = max(o.nextIndex, o.segments[n-1].last()+1)
	}
	// Appends always start a fresh segment after a restart: the old tail may have been cut.
	return nil
}

// Append buffers one record durably. On a write failure (a full disk) nothing half-written stays
// behind: the segment is cut back, so later records are not hidden behind a torn one.
func (o *Outbox) Append(recordType string, key int64, payload []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	typeIndex := typeByte(recordType)
	if typeIndex < 0 {
		return fmt.Errorf("outbox: unknown record type %q", recordType)
	}
	index := o.nextIndex
	data := encodeRecord(Record{Index: index, Type: recordType, Key: key, Payload: payload})
	seg := o.lastSegment()
	if seg == nil || o.active == nil || seg.bytes >= o.options.SegmentBytes {
		o.closeActive()
		seg = &segment{path: o.segmentPath(index)}
		file, err := os.OpenFile(seg.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("outbox: open segment: %w", err)
		}
		o.active = file
		o.segments = append(o.segments, seg)
	}
	if err := o.write(data); err != nil {
		if truncateErr := o.active.Truncate(seg.bytes); truncateErr != nil {
			// Cannot cut it back: leave this segment (its torn tail is cut at the next open).
			o.closeActive()
		}
		if len(seg.indexes) == 0 {
			o.dropSegment(len(o.segments) - 1)
		}
		return fmt.Errorf("outbox: append: %w", err)
	}
	o.nextIndex++
	seg.indexes = append(seg.indexes, index)
	seg.bytes += int64(len(data))
	if recordType == "mx" {
		seg.metrics++
	}
	return o.enforceCap()
}

func (o *Outbox) write(data []byte) error {
	if _, err := o.active.Write(data); err != nil {
		return err
	}
	if o.options.NoSync {
		return nil
	}
	return o.active.Sync()
}

// Peek returns up to max of the oldest undelivered records, in order.
func (o *Outbox) Peek(max int) ([]Record, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var found []Record
	for _, seg := range o.segments {
		if seg.last() < o.cursor {
			continue
		}
		data, err := os.ReadFile(seg.path)
		if err != nil {
			return found, fmt.Errorf("outbox: read segment: %w", err)
		}
		records, _ := parseRecords(data)
		for _, record := range records {
			if record.Index < o.cursor {
				continue
			}
			found = append(found, record)
			if len(found) >= max {
				return found, nil
			}
		}
	}
	return found, nil
}

// Ack marks every record up to and including index as delivered.
func (o *Outbox) Ack(index int64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if index < o.cursor {
		return nil
	}
	o.cursor = index + 1
	temporary := filepath.Join(o.options.Dir, cursorFile+".tmp")
	if err := os.WriteFile(temporary, []byte(strconv.FormatInt(o.cursor, 10)), 0o600); err != nil {
		return fmt.Errorf("outbox: save cursor: %w", err)
	}
	if err := os.Rename(temporary, filepath.Join(o.options.Dir, cursorFile)); err != nil {
		return fmt.Errorf("outbox: save cursor: %w", err)
	}
	for len(o.segments) > 0 && o.segments[0].last() < o.cursor {
		o.dropSegment(0)
	}
	return nil
}

// Stats counts what waits.
func (o *Outbox) Stats() Stats {
	o.mu.Lock()
	defer o.mu.Unlock()
	stats := Stats{Evicted: o.evicted, Bytes: o.totalBytes()}
	for _, seg := range o.segments {
		stats.Records += o.undelivered(seg)
	}
	return stats
}

// Close releases the open segment.
func (o *Outbox) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closeActive()
	return nil
}

func (o *Outbox) undelivered(seg *segment) int {
	count := 0
	for _, index := range seg.indexes {
		if index >= o.cursor {
			count++
		}
	}
	return count
}

func (o *Outbox) totalBytes() int64 {
	var total int64
	for _, seg := range o.segments {
		total += seg.bytes
	}
	return total
}

func (o *Outbox) lastSegment() *segment {
	if len(o.segments) == 0 {
		return nil
	}
	return o.segments[len(o.segments)-1]
}

func (o *Outbox) closeActive() {
	if o.active != nil {
		_ = o.active.Close()
		o.active = nil
	}
}

func (o *Outbox) segmentPath(firstIndex int64) string {
	return filepath.Join(o.options.Dir, fmt.Sprintf("%016d%s", firstIndex, segmentSuffix))
}

func (o *Outbox) dropSegment(position int) {
	seg := o.segments[position]
	if position == len(o.segments)-1 {
		o.closeActive()
	}
	o.segments = append(o.segments[:position], o.segments[position+1:]...)
	_ = os.Remove(seg.path)
}

// enforceCap rewrites the oldest segment holding metrics without them, else drops the oldest.
func (o *Outbox) enforceCap() error {
	for o.totalBytes() > o.options.MaxBytes {
		position := -1
		for i, seg := range o.segments {
			if seg.metrics > 0 {
				position = i
				break
			}
		}
		if position < 0 {
			count := o.undelivered(o.segments[0])
			o.evicted += count
			o.evict(count, "mixed")
			o.dropSegment(0)
			continue
		}
		seg := o.segments[position]
		isActive := position == len(o.segments)-1
		if isActive {
			o.closeActive()
		}
		data, err := os.ReadFile(seg.path)
		if err != nil {
			return fmt.Errorf("outbox: evict: %w", err)
		}
		records, _ := parseRecords(data)
		var kept []Record
		dropped := 0
		for _, record := range records {
			switch {
			case record.Type != "mx":
				kept = append(kept, record)
			case record.Index >= o.cursor:
				dropped++
			}
		}
		o.evicted += dropped
		o.evict(dropped, "mx")
		if len(kept) == 0 {
			o.dropSegment(position)
			continue
		}
		var rewritten []byte
		for _, record := range kept {
			rewritten = append(rewritten, encodeRecord(record)...)
		}
		temporary := seg.path + ".tmp"
		if err := os.WriteFile(temporary, rewritten, 0o600); err != nil {
			_ = os.Remove(temporary)
			return fmt.Errorf("outbox: evict: %w", err)
		}
		if err := os.Rename(temporary, seg.path); err != nil {
			return fmt.Errorf("outbox: evict: %w", err)
		}
		seg.bytes = int64(len(rewritten))
		seg.indexes = seg.indexes[:0]
		for _, record := range kept {
			seg.indexes = append(seg.indexes, record.Index)
		}
		seg.metrics = 0
		if isActive {
			file, err := os.OpenFile(seg.path, os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				return fmt.Errorf("outbox: reopen segment: %w", err)
			}
			o.active = file
		}
	}
	return nil
}

func (o *Outbox) evict(count int, recordType string) {
	if o.options.OnEvict != nil && count > 0 {
		o.options.OnEvict(count, recordType)
	}
}

func typeByte(recordType string) int {
	for i, t := range Types {
		if t == recordType {
			return i
		}
	}
	return -1
}

func encodeRecord(record Record) []byte {
	out := make([]byte, headerBytes+bodyFixedBytes+len(record.Payload))
	body := out[headerBytes:]
	binary.LittleEndian.PutUint64(body[0:], math.Float64bits(float64(record.Index)))
	body[8] = byte(typeByte(record.Type))
	binary.LittleEndian.PutUint64(body[9:], math.Float64bits(float64(record.Key)))
	copy(body[bodyFixedBytes:], record.Payload)
	binary.LittleEndian.PutUint32(out[0:], uint32(len(body)))
	binary.LittleEndian.PutUint32(out[4:], crc32.ChecksumIEEE(body))
	return out
}

// parseRecords returns every intact record and where the intact part ends.
func parseRecords(data []byte) ([]Record, int) {
	var records []Record
	offset := 0
	for offset+headerBytes <= len(data) {
		length := int(binary.LittleEndian.Uint32(data[offset:]))
		end := offset + headerBytes + length
		if length < bodyFixedBytes || end > len(data) || end < offset {
			break
		}
		body := data[offset+headerBytes : end]
		if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(data[offset+4:]) {
			break
		}
		typeIndex := int(body[8])
		if typeIndex >= len(Types) {
			break
		}
		records = append(records, Record{
			Index:   int64(math.Float64frombits(binary.LittleEndian.Uint64(body[0:]))),
			Type:    Types[typeIndex],
			Key:     int64(math.Float64frombits(binary.LittleEndian.Uint64(body[9:]))),
			Payload: append([]byte(nil), body[bodyFixedBytes:]...),
		})
		offset = end
	}
	return records, offset
}
