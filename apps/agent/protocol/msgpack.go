package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// The wire format is MessagePack (vmihailenco/msgpack for the bytes); the schema mapping is ours.
// Messages go through a small tree: decoding builds it with the same limits as the TypeScript
// decoder, and encoding writes it in the order its map keys were put, which is the schema's
// order — so equal messages encode to the same bytes in both languages (the test vectors).

// Map is a MessagePack map with string keys that keeps its keys in order.
type Map struct {
	keys   []string
	values []any
}

// NewMap returns an empty ordered map.
func NewMap() *Map { return &Map{} }

// Put sets key to value; a key put again keeps its first position (like a JS object).
func (m *Map) Put(key string, value any) *Map {
	for i, existing := range m.keys {
		if existing == key {
			m.values[i] = value
			return m
		}
	}
	m.keys = append(m.keys, key)
	m.values = append(m.values, value)
	return m
}

// Get returns the value of key and whether it is present.
func (m *Map) Get(key string) (any, bool) {
	for i, existing := range m.keys {
		if existing == key {
			return m.values[i], true
		}
	}
	return nil, false
}

// String shows the map in key order (tests compare trees through it).
func (m *Map) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, key := range m.keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%v", key, m.values[i])
	}
	b.WriteByte('}')
	return b.String()
}

// Len is the number of keys.
func (m *Map) Len() int { return len(m.keys) }

// Keys returns the keys in order.
func (m *Map) Keys() []string { return m.keys }

// Limits the TypeScript decoder applies (codec.ts): they bound the work a hostile payload causes.
const (
	maxArrayLength = 4096
	maxMapLength   = 4096
	// Deeper than any message: a pile of nested arrays is refused before it costs stack.
	maxDepth = 32
)

// errNotMsgpack marks bytes that are not one well-formed MessagePack value.
var errNotMsgpack = errors.New("not msgpack")

// errTooDeep marks a value nested deeper than any message (a schema failure, not a format one).
var errTooDeep = errors.New("nested too deeply")

// decodeTree parses exactly one MessagePack value from data into nil, bool, int64, uint64,
// float64, string, []byte, []any, *Map, or extension (an unsupported type the schema refuses).
func decodeTree(data []byte, maxLen int) (any, error) {
	reader := bytes.NewReader(data)
	dec := &treeDecoder{Decoder: msgpack.NewDecoder(reader), data: data, reader: reader, maxLen: maxLen}
	value, err := dec.value(0)
	if err != nil {
		return nil, err
	}
	if reader.Len() > 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes after the value", errNotMsgpack, reader.Len())
	}
	return value, nil
}

type extension struct{ id int8 }

// treeDecoder reads from an in-memory payload, so a declared length can be checked against what
// is left before anything is allocated for it.
type treeDecoder struct {
	*msgpack.Decoder
	data   []byte
	reader *bytes.Reader
	maxLen int
}

// checkDeclaredLength refuses a str, bin or ext whose header claims more bytes than are left.
func (d *treeDecoder) checkDeclaredLength(code byte) error {
	at := len(d.data) - d.reader.Len()
	size := 0
	switch code {
	case msgpcode.Str8, msgpcode.Bin8, msgpcode.Ext8:
		size = 1
	case msgpcode.Str16, msgpcode.Bin16, msgpcode.Ext16:
		size = 2
	case msgpcode.Str32, msgpcode.Bin32, msgpcode.Ext32:
		size = 4
	default:
		return nil // fixed sizes: the header itself bounds them
	}
	if at+1+size > len(d.data) {
		return fmt.Errorf("%w: truncated length", errNotMsgpack)
	}
	declared := 0
	for _, b := range d.data[at+1 : at+1+size] {
		declared = declared<<8 | int(b)
	}
	if declared > len(d.data)-at-1-size {
		return fmt.Errorf("%w: declares %d bytes, %d left", errNotMsgpack, declared, len(d.data)-at-1-size)
	}
	if declared > d.maxLen {
		return fmt.Errorf("%w: %d bytes exceeds %d", errNotMsgpack, declared, d.maxLen)
	}
	return nil
}

func formatError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, errNotMsgpack) || errors.Is(err, errTooDeep) {
		return err
	}
	return fmt.Errorf("%w: %v", errNotMsgpack, err)
}

func (dec *treeDecoder) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	code, err := dec.PeekCode()
	if err != nil {
		return nil, formatError(err)
	}
	if err := dec.checkDeclaredLength(code); err != nil {
		return nil, err
	}
	switch {
	case code == msgpcode.Nil:
		return nil, formatError(dec.DecodeNil())
	case code == msgpcode.True || code == msgpcode.False:
		value, err := dec.DecodeBool()
		return value, formatError(err)
	case msgpcode.IsFixedNum(code), code == msgpcode.Int8, code == msgpcode.Int16,
		code == msgpcode.Int32, code == msgpcode.Int64, code == msgpcode.Uint8,
		code == msgpcode.Uint16, code == msgpcode.Uint32:
		value, err := dec.DecodeInt64()
		return value, formatError(err)
	case code == msgpcode.Uint64:
		value, err := dec.DecodeUint64()
		if err == nil && value <= 1<<63-1 {
			return int64(value), nil
		}
		return value, formatError(err)
	case code == msgpcode.Float || code == msgpcode.Double:
		value, err := dec.DecodeFloat64()
		return value, formatError(err)
	case msgpcode.IsString(code):
		value, err := dec.DecodeString()
		if err == nil && len(value) > dec.maxLen {
			return nil, fmt.Errorf("%w: string of %d bytes exceeds %d", errNotMsgpack, len(value), dec.maxLen)
		}
		return value, formatError(err)
	case msgpcode.IsBin(code):
		value, err := dec.DecodeBytes()
		if err == nil && len(value) > dec.maxLen {
			return nil, fmt.Errorf("%w: binary of %d bytes exceeds %d", errNotMsgpack, len(value), dec.maxLen)
		}
		return value, formatError(err)
	case msgpcode.IsFixedArray(code) || code == msgpcode.Array16 || code == msgpcode.Array32:
		return dec.array(depth)
	case msgpcode.IsFixedMap(code) || code == msgpcode.Map16 || code == msgpcode.Map32:
		return dec.mapValue(depth)
	case msgpcode.IsExt(code):
		id, length, err := dec.DecodeExtHeader()
		if err != nil {
			return nil, formatError(err)
		}
		if length > dec.maxLen {
			return nil, fmt.Errorf("%w: extension of %d bytes exceeds %d", errNotMsgpack, length, dec.maxLen)
		}
		if err := dec.ReadFull(make([]byte, length)); err != nil {
			return nil, formatError(err)
		}
		return extension{id: id}, nil
	default:
		return nil, fmt.Errorf("%w: unknown type byte 0x%02x", errNotMsgpack, code)
	}
}

func (dec *treeDecoder) array(depth int) (any, error) {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return nil, formatError(err)
	}
	if n > maxArrayLength {
		return nil, fmt.Errorf("%w: array of %d items exceeds %d", errNotMsgpack, n, maxArrayLength)
	}
	items := make([]any, 0, n)
	for range n {
		item, err := dec.value(depth + 1)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	return items, nil
}

func (dec *treeDecoder) mapValue(depth int) (any, error) {
	n, err := dec.DecodeMapLen()
	if err != nil {
		return nil, formatError(err)
	}
	if n > maxMapLength {
		return nil, fmt.Errorf("%w: map of %d entries exceeds %d", errNotMsgpack, n, maxMapLength)
	}
	m := &Map{keys: make([]string, 0, n), values: make([]any, 0, n)}
	for range n {
		rawKey, err := dec.value(depth + 1)
		if err != nil {
			return nil, err
		}
		// Like @msgpack/msgpack: string or number keys only (a number becomes its decimal text).
		var key string
		switch k := rawKey.(type) {
		case string:
			key = k
		case int64:
			key = strconv.FormatInt(k, 10)
		case uint64:
			key = strconv.FormatUint(k, 10)
		default:
			return nil, fmt.Errorf("%w: map key of type %s", errNotMsgpack, describe(rawKey))
		}
		value, err := dec.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m.Put(key, value)
	}
	return m, nil
}

// encodeTree writes a tree built from the types decodeTree returns (plus int and bool).
func encodeTree(value any) ([]byte, error) {
	var buffer bytes.Buffer
	enc := msgpack.NewEncoder(&buffer)
	if err := encodeValue(enc, value); err != nil {
		return nil, err
	}
	return buffer.Bytes(), nil
}

func encodeValue(enc *msgpack.Encoder, value any) error {
	switch v := value.(type) {
	case nil:
		return enc.EncodeNil()
	case bool:
		return enc.EncodeBool(v)
	case int:
		return enc.EncodeInt(int64(v))
	case int64:
		// Smallest form, unsigned for non-negative values: what @msgpack/msgpack writes.
		return enc.EncodeInt(v)
	case uint64:
		return enc.EncodeUint(v)
	case string:
		return enc.EncodeString(v)
	case []byte:
		return enc.EncodeBytes(v)
	case []string:
		if err := enc.EncodeArrayLen(len(v)); err != nil {
			return err
		}
		for _, item := range v {
			if err := enc.EncodeString(item); err != nil {
				return err
			}
		}
		return nil
	case []any:
		if err := enc.EncodeArrayLen(len(v)); err != nil {
			return err
		}
		for _, item := range v {
			if err := encodeValue(enc, item); err != nil {
				return err
			}
		}
		return nil
	case *Map:
		if err := enc.EncodeMapLen(v.Len()); err != nil {
			return err
		}
		for i, key := range v.keys {
			if err := enc.EncodeString(key); err != nil {
				return err
			}
			if err := encodeValue(enc, v.values[i]); err != nil {
				return err
			}
		}
		return nil
	default:
		return fmt.Errorf("cannot encode a %T", value)
	}
}

// describe names a decoded value's type the way the TypeScript codec does in its details.
func describe(value any) string {
	switch value.(type) {
	case nil:
		return "nil"
	case bool:
		return "boolean"
	case int64, uint64, float64:
		return "number"
	case string:
		return "string"
	case []byte:
		return "binary"
	case []any:
		return "an array"
	case *Map:
		return "a map"
	default:
		return "an extension"
	}
}
