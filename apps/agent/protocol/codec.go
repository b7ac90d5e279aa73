package protocol

import (
	"errors"
	"fmt"
	"math"
)

// Reason classifies a refused payload, as codec.ts does: the agent counts them per reason.
type Reason string

// Why a received payload is refused.
const (
	ReasonTooLarge       Reason = "too_large"
	ReasonNotMsgpack     Reason = "not_msgpack"
	ReasonUnknownVersion Reason = "unknown_version"
	ReasonInvalid        Reason = "invalid"
)

// DecodeError is a refused payload: never a crash, always a reason and a detail.
type DecodeError struct {
	Type   MessageType
	Reason Reason
	Detail string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s refused (%s): %s", e.Type, e.Reason, e.Detail)
}

// EncodeError is a sender bug: its own message is invalid or too big.
type EncodeError struct{ Detail string }

func (e *EncodeError) Error() string { return e.Detail }

// Decode reads and validates one received payload of the given type.
func Decode(messageType MessageType, data []byte) (Message, error) {
	read, known := readers[messageType]
	if !known {
		return nil, fmt.Errorf("unknown message type %q", messageType)
	}
	limit := SizeLimits[messageType]
	refuse := func(reason Reason, detail string) (Message, error) {
		return nil, &DecodeError{Type: messageType, Reason: reason, Detail: detail}
	}
	if len(data) > limit {
		return refuse(ReasonTooLarge, fmt.Sprintf("%d bytes exceeds the %d-byte limit", len(data), limit))
	}
	tree, err := decodeTree(data, limit)
	if errors.Is(err, errTooDeep) {
		return refuse(ReasonInvalid, err.Error())
	}
	if err != nil {
		return refuse(ReasonNotMsgpack, err.Error())
	}
	top, isMap := tree.(*Map)
	if !isMap {
		return refuse(ReasonInvalid, fmt.Sprintf("%s must be a map, got %s", messageType, describe(tree)))
	}
	v, present := top.Get("v")
	if !present {
		return refuse(ReasonInvalid, "missing protocol version v")
	}
	if !isVersion(v) {
		return refuse(ReasonUnknownVersion, fmt.Sprintf("protocol version %v is not supported", v))
	}
	found := &issues{}
	msg := read(object{m: top, issues: found})
	if len(found.list) > 0 {
		return refuse(ReasonInvalid, found.summary())
	}
	return msg, nil
}

// DecodeAs decodes a payload that must be of message type T.
func DecodeAs[T Message](data []byte) (T, error) {
	var zero T
	msg, err := Decode(zero.Type(), data)
	if err != nil {
		return zero, err
	}
	return msg.(T), nil
}

func isVersion(v any) bool {
	switch n := v.(type) {
	case int64:
		return n == Version
	case float64:
		return n == Version && !math.IsNaN(n)
	}
	return false
}

// Encode validates and encodes one message: the schema fixes the key order, so equal messages
// always encode to the same bytes. Validation is the receiving side's: the bytes must decode.
func Encode(msg Message) ([]byte, error) {
	data, err := encodeTree(msg.toMap())
	if err != nil {
		return nil, &EncodeError{Detail: fmt.Sprintf("cannot encode %s: %v", msg.Type(), err)}
	}
	limit := SizeLimits[msg.Type()]
	if len(data) > limit {
		return nil, &EncodeError{Detail: fmt.Sprintf("cannot encode %s: %d bytes exceeds the %d-byte limit", msg.Type(), len(data), limit)}
	}
	if _, err := Decode(msg.Type(), data); err != nil {
		var refused *DecodeError
		if errors.As(err, &refused) {
			return nil, &EncodeError{Detail: fmt.Sprintf("cannot encode %s: %s", msg.Type(), refused.Detail)}
		}
		return nil, err
	}
	return data, nil
}

// MustEncode encodes a message the agent built itself; an error is a bug in the agent.
func MustEncode(msg Message) []byte {
	data, err := Encode(msg)
	if err != nil {
		panic(err)
	}
	return data
}
