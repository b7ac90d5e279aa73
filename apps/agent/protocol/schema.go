package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
)

// The schemas of packages/agent-sdk/src/protocol/messages.ts, as readers over a decoded tree.
// A reader collects issues with their field path ("inst.0.st"), like zod, instead of stopping at
// the first; unknown keys are ignored (older receivers ignore added fields).

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER: the TypeScript side's integer bound.
const maxSafeInteger = 1<<53 - 1

// Int4Max bounds values stored in a Postgres integer column (revisions, restarts).
const Int4Max = 2_147_483_647

type issues struct{ list []string }

func (i *issues) add(path, message string) {
	if path == "" {
		path = "(root)"
	}
	i.list = append(i.list, path+": "+message)
}

func (i *issues) summary() string {
	shown := i.list
	if len(shown) > 3 {
		shown = shown[:3]
	}
	return strings.Join(shown, "; ")
}

// object reads the fields of one map of the tree.
type object struct {
	m      *Map
	path   string
	issues *issues
}

func (o object) at(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

func atIndex(path string, index int) string {
	if path == "" {
		return strconv.Itoa(index)
	}
	return path + "." + strconv.Itoa(index)
}

// asObject reads value as a map; nil (with an issue) when it is not one.
func asObject(value any, path string, found *issues) (object, bool) {
	m, ok := value.(*Map)
	if !ok {
		found.add(path, "expected object, received "+describe(value))
		return object{}, false
	}
	return object{m: m, path: path, issues: found}, true
}

func (o object) has(key string) bool {
	_, present := o.m.Get(key)
	return present
}

func (o object) required(key string) (any, bool) {
	value, present := o.m.Get(key)
	if !present {
		o.issues.add(o.at(key), "required")
	}
	return value, present
}

// text is a string of min..max UTF-16 code units (JavaScript's length) without NUL.
type text struct{ min, max int }

var (
	shortText    = text{1, 64}
	appNameText  = text{1, 128}
	versionText  = text{1, 128}
	reasonText   = text{0, 256}
	wireIDRegexp = regexp.MustCompile(`^[0-9a-z]{1,20}$`)
	sha256Regexp = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

func jsLength(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

func checkString(value any, path string, found *issues) (string, bool) {
	s, ok := value.(string)
	if !ok {
		found.add(path, "expected string, received "+describe(value))
	}
	return s, ok
}

func checkText(value any, path string, limits text, found *issues) (string, bool) {
	s, ok := checkString(value, path, found)
	if !ok {
		return "", false
	}
	length := jsLength(s)
	switch {
	case length < limits.min:
		found.add(path, fmt.Sprintf("too short: expected at least %d characters", limits.min))
		return s, false
	case length > limits.max:
		found.add(path, fmt.Sprintf("too long: expected at most %d characters", limits.max))
		return s, false
	case strings.ContainsRune(s, 0):
		found.add(path, "must not contain NUL (U+0000)")
		return s, false
	}
	return s, true
}

func checkPattern(value any, path string, pattern *regexp.Regexp, message string, found *issues) (string, bool) {
	s, ok := checkString(value, path, found)
	if ok && !pattern.MatchString(s) {
		found.add(path, message)
		return s, false
	}
	return s, ok
}

// checkInt reads an integer in [min, max]; a float with an integral value counts (as in zod).
func checkInt(value any, path string, min, max int64, found *issues) (int64, bool) {
	var n int64
	switch v := value.(type) {
	case int64:
		n = v
	case uint64:
		found.add(path, fmt.Sprintf("too big: expected at most %d", max))
		return 0, false
	case float64:
		if v != math.Trunc(v) || math.IsInf(v, 0) || math.Abs(v) > maxSafeInteger {
			found.add(path, "expected int, received number")
			return 0, false
		}
		n = int64(v)
	default:
		found.add(path, "expected number, received "+describe(value))
		return 0, false
	}
	if n < min {
		found.add(path, fmt.Sprintf("too small: expected at least %d", min))
		return n, false
	}
	if n > max {
		found.add(path, fmt.Sprintf("too big: expected at most %d", max))
		return n, false
	}
	return n, true
}

func checkEnum(value any, path string, allowed []string, found *issues) (string, bool) {
	s, ok := checkString(value, path, found)
	if !ok {
		return "", false
	}
	for _, candidate := range allowed {
		if s == candidate {
			return s, true
		}
	}
	found.add(path, "invalid option: expected one of "+strings.Join(allowed, "|"))
	return s, false
}

func (o object) text(key string, limits text) string {
	if value, ok := o.required(key); ok {
		s, _ := checkText(value, o.at(key), limits, o.issues)
		return s
	}
	return ""
}

func (o object) optText(key string, limits text) *string {
	value, present := o.m.Get(key)
	if !present {
		return nil
	}
	s, _ := checkText(value, o.at(key), limits, o.issues)
	return &s
}

func (o object) pattern(key string, pattern *regexp.Regexp, message string) string {
	if value, ok := o.required(key); ok {
		s, _ := checkPattern(value, o.at(key), pattern, message, o.issues)
		return s
	}
	return ""
}

func (o object) optPattern(key string, pattern *regexp.Regexp, message string) string {
	value, present := o.m.Get(key)
	if !present {
		return ""
	}
	s, _ := checkPattern(value, o.at(key), pattern, message, o.issues)
	return s
}

func (o object) int(key string, min, max int64) int64 {
	if value, ok := o.required(key); ok {
		n, _ := checkInt(value, o.at(key), min, max, o.issues)
		return n
	}
	return 0
}

func (o object) optInt(key string, min, max int64) *int64 {
	value, present := o.m.Get(key)
	if !present {
		return nil
	}
	n, _ := checkInt(value, o.at(key), min, max, o.issues)
	return &n
}

func (o object) enum(key string, allowed []string) string {
	if value, ok := o.required(key); ok {
		s, _ := checkEnum(value, o.at(key), allowed, o.issues)
		return s
	}
	return ""
}

func (o object) optEnum(key string, allowed []string) string {
	value, present := o.m.Get(key)
	if !present {
		return ""
	}
	s, _ := checkEnum(value, o.at(key), allowed, o.issues)
	return s
}

func (o object) optBool(key string) *bool {
	value, present := o.m.Get(key)
	if !present {
		return nil
	}
	b, ok := value.(bool)
	if !ok {
		o.issues.add(o.at(key), "expected boolean, received "+describe(value))
	}
	return &b
}

// array reads a list of at most max items (min items at least), calling item for each.
func (o object) array(key string, min, max int, item func(value any, path string)) bool {
	value, ok := o.required(key)
	if !ok {
		return false
	}
	return checkArray(value, o.at(key), min, max, item, o.issues)
}

func (o object) optArray(key string, min, max int, item func(value any, path string)) bool {
	value, present := o.m.Get(key)
	if !present {
		return false
	}
	return checkArray(value, o.at(key), min, max, item, o.issues)
}

func checkArray(value any, path string, min, max int, item func(value any, path string), found *issues) bool {
	items, ok := value.([]any)
	if !ok {
		found.add(path, "expected array, received "+describe(value))
		return false
	}
	if len(items) < min {
		found.add(path, fmt.Sprintf("too small: expected at least %d items", min))
	}
	if len(items) > max {
		found.add(path, fmt.Sprintf("too big: expected at most %d items", max))
	}
	for i, v := range items {
		item(v, atIndex(path, i))
	}
	return true
}

// stringList reads an array of texts.
func (o object) stringList(key string, minItems, maxItems int, limits text, optional bool) []string {
	var list []string
	read := func(value any, path string) {
		s, _ := checkText(value, path, limits, o.issues)
		list = append(list, s)
	}
	var present bool
	if optional {
		present = o.optArray(key, minItems, maxItems, read)
	} else {
		present = o.array(key, minItems, maxItems, read)
	}
	if present && list == nil {
		list = []string{}
	}
	return list
}

// record reads a map of text to text, in its order.
func (o object) record(key string, keyCheck func(string, string) bool, valueLimits text) StringMap {
	value, present := o.m.Get(key)
	if !present {
		return nil
	}
	inner, ok := asObject(value, o.at(key), o.issues)
	if !ok {
		return nil
	}
	record := StringMap{}
	for i, name := range inner.m.keys {
		path := inner.at(name)
		keyCheck(name, path)
		s, _ := checkText(inner.m.values[i], path, valueLimits, o.issues)
		record = append(record, KV{Key: name, Value: s})
	}
	return record
}

// sub reads a nested object (required).
func (o object) sub(key string) (object, bool) {
	value, ok := o.required(key)
	if !ok {
		return object{}, false
	}
	return asObject(value, o.at(key), o.issues)
}

// KV is one entry of an ordered string map.
type KV struct {
	Key   string
	Value string
}

// StringMap is a map of strings that keeps its order (labels, environment): nil is absent.
type StringMap []KV

// Get returns the value of key.
func (m StringMap) Get(key string) (string, bool) {
	for _, kv := range m {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

func (m StringMap) toMap() *Map {
	out := NewMap()
	for _, kv := range m {
		out.Put(kv.Key, kv.Value)
	}
	return out
}

func strings2any(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

// MarshalJSON writes the map as a JSON object in its order (state.json, slot.json).
func (m StringMap) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(kv.Key)
		if err != nil {
			return nil, err
		}
		value, err := json.Marshal(kv.Value)
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a JSON object of strings, keeping its order.
func (m *StringMap) UnmarshalJSON(data []byte) error {
	decoder := json.NewDecoder(bytes.NewReader(data))
	token, err := decoder.Token()
	if err != nil {
		return err
	}
	if token == nil {
		*m = nil
		return nil
	}
	if delim, ok := token.(json.Delim); !ok || delim != '{' {
		return fmt.Errorf("expected an object of strings, got %v", token)
	}
	out := StringMap{}
	for decoder.More() {
		key, err := decoder.Token()
		if err != nil {
			return err
		}
		var value string
		if err := decoder.Decode(&value); err != nil {
			return fmt.Errorf("%v: %w", key, err)
		}
		out = append(out, KV{Key: key.(string), Value: value})
	}
	*m = out
	return nil
}
