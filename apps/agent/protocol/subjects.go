package protocol

import (
	"fmt"
	"regexp"
)

// Subjects of the edge protocol, agent's view (docs/protocol.md "Subjects"): the node's own
// `ef.up.<wid>.<type>` up, `ef.down.<wid>` down, replies on `_INBOX.<wid>.…`.

// EnrollSubject is where enrollment requests go (ENROLL account).
const EnrollSubject = "ef.enroll"

// Up message types (the last token of an up subject).
const (
	UpHello = "hello"
	UpHb    = "hb"
	UpSt    = "st"
	UpMx    = "mx"
	UpAck   = "ack"
	UpArt   = "art"
	// UpCmd carries command replies (core publish); requests come down on DownSubject.
	UpCmd = "cmd"
	// UpPrb carries a hub probe's chunks (request/reply, answered by the gateway that asked).
	UpPrb = "prb"
	// UpSink carries a leaf probe's chunks: nobody subscribes, the leaf server drops them.
	UpSink = "sink"
)

// DurableUpTypes go through JetStream (stream EF_UP), buffered in the outbox while offline.
var DurableUpTypes = []string{UpSt, UpMx, UpAck}

var wireIDPattern = regexp.MustCompile(`^[0-9a-z]{1,20}$`)

// IsWireID tells whether s is a wire id (node or organization): [0-9a-z]{1,20}.
func IsWireID(s string) bool { return wireIDPattern.MatchString(s) }

// UpSubject is `ef.up.<wid>.<type>`.
func UpSubject(wid, upType string) string {
	mustWireID(wid)
	return "ef.up." + wid + "." + upType
}

// DownSubject is `ef.down.<wid>` (DesiredDelta and CommandRequest: see DownlinkMessageType).
func DownSubject(wid string) string {
	mustWireID(wid)
	return "ef.down." + wid
}

// InboxPrefix is the node connection's inbox prefix: its user may subscribe only below it.
func InboxPrefix(wid string) string {
	mustWireID(wid)
	return "_INBOX." + wid
}

func mustWireID(wid string) {
	if !IsWireID(wid) {
		panic(fmt.Sprintf("invalid node wire id %q: want [0-9a-z]{1,20}", wid))
	}
}
