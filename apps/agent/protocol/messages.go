package protocol

import (
	"fmt"
	"regexp"
)

// Version is the protocol version every message carries in `v`.
const Version = 1

// MessageType names a message of protocol v1 (the keys of messageSchemas in messages.ts).
type MessageType string

// The message types of protocol v1.
const (
	TypeEnrollRequest        MessageType = "enrollRequest"
	TypeEnrollReply          MessageType = "enrollReply"
	TypeEnrollReplyBody      MessageType = "enrollReplyBody"
	TypeHello                MessageType = "hello"
	TypeHelloReply           MessageType = "helloReply"
	TypeCredentialsUpdate    MessageType = "credentialsUpdate"
	TypeHeartbeat            MessageType = "heartbeat"
	TypeDesiredDelta         MessageType = "desiredDelta"
	TypeDesiredAck           MessageType = "desiredAck"
	TypeStatusReport         MessageType = "statusReport"
	TypeMetricsReport        MessageType = "metricsReport"
	TypeArtifactChunkRequest MessageType = "artifactChunkRequest"
	TypeArtifactChunkReply   MessageType = "artifactChunkReply"
	TypeCommandRequest       MessageType = "commandRequest"
	TypeCommandReply         MessageType = "commandReply"
)

// MessageTypes lists every message type, in the order of messages.ts.
var MessageTypes = []MessageType{
	TypeEnrollRequest, TypeEnrollReply, TypeEnrollReplyBody, TypeHello, TypeHelloReply,
	TypeCredentialsUpdate, TypeHeartbeat, TypeDesiredDelta, TypeDesiredAck, TypeStatusReport, TypeMetricsReport,
	TypeArtifactChunkRequest, TypeArtifactChunkReply, TypeCommandRequest, TypeCommandReply,
}

// Artifact sizes (artifacts.ts).
const (
	MaxArtifactBytes      = 256 * 1024 * 1024
	MaxArtifactChunkBytes = 128 * 1024
)

// SizeLimits is the largest encoded payload a receiver accepts, per message.
var SizeLimits = map[MessageType]int{
	TypeEnrollRequest:        4 * 1024,
	TypeEnrollReply:          12 * 1024,
	TypeEnrollReplyBody:      8 * 1024,
	TypeHello:                1024,
	TypeHelloReply:           1024 * 1024,
	TypeCredentialsUpdate:    8 * 1024,
	TypeHeartbeat:            64,
	TypeDesiredDelta:         1024 * 1024,
	TypeDesiredAck:           64,
	TypeStatusReport:         64 * 1024,
	TypeMetricsReport:        16 * 1024,
	TypeArtifactChunkRequest: 128,
	TypeArtifactChunkReply:   MaxArtifactChunkBytes + 512,
	TypeCommandRequest:       512,
	TypeCommandReply:         CommandReplyLimit,
}

// Message is one protocol message.
type Message interface {
	Type() MessageType
	toMap() *Map
}

var (
	userKeyRegexp  = regexp.MustCompile(`^U[A-Z2-7]{55}$`)
	curveKeyRegexp = regexp.MustCompile(`^X[A-Z2-7]{55}$`)
	sigRegexp      = regexp.MustCompile(`^[A-Za-z0-9_-]{86}$`)
	boxRegexp      = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	// A node's user JWT: header.claims.signature, base64url (at most maxJWTLength chars).
	jwtRegexp = regexp.MustCompile(`^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$`)
)

const maxJWTLength = 6144

const (
	wireIDMessage   = "wire id must be [0-9a-z]{1,20}"
	sha256Message   = "must be a lowercase hex SHA-256 (64 characters)"
	curveKeyMessage = "must be a public curve nkey (X + 55 base32 chars)"
	jwtMessage      = "jwt must be a JWT (three base64url parts)"
)

// jwt reads a node user JWT (optional: "" when absent).
func (o object) jwt(key string, required bool) string {
	if !required && !o.has(key) {
		return ""
	}
	value := o.pattern(key, jwtRegexp, jwtMessage)
	if len(value) > maxJWTLength {
		o.issues.add(o.at(key), fmt.Sprintf("at most %d characters", maxJWTLength))
	}
	return value
}

// EnrollRequest asks for node credentials with an enrollment token (sealed reply, see enroll.go).
type EnrollRequest struct {
	Tok    string
	Key    string
	Name   string
	Labels StringMap
	Av     string
	OS     string
	Arch   string
	Xk     string
	Sig    string
}

func (EnrollRequest) Type() MessageType { return TypeEnrollRequest }

func (m EnrollRequest) toMap() *Map {
	out := version().Put("tok", m.Tok).Put("key", m.Key).Put("name", m.Name)
	if m.Labels != nil {
		out.Put("lab", m.Labels.toMap())
	}
	return out.Put("av", m.Av).Put("os", m.OS).Put("arch", m.Arch).Put("xk", m.Xk).Put("sig", m.Sig)
}

func readEnrollRequest(o object) Message {
	return EnrollRequest{
		Tok:  o.text("tok", text{1, 256}),
		Key:  o.pattern("key", userKeyRegexp, "key must be a public user nkey (U + 55 base32 chars)"),
		Name: o.text("name", text{1, 128}),
		Labels: o.record("lab", func(name, path string) bool {
			_, ok := checkText(name, path, text{1, 63}, o.issues)
			return ok
		}, text{0, 255}),
		Av:   o.text("av", shortText),
		OS:   o.text("os", shortText),
		Arch: o.text("arch", shortText),
		Xk:   o.pattern("xk", curveKeyRegexp, curveKeyMessage),
		Sig:  o.pattern("sig", sigRegexp, "sig must be a base64url Ed25519 signature (86 chars)"),
	}
}

// EnrollReply is sealed (Xk, Box) or, to a request too malformed to seal to, a plain rejection.
type EnrollReply struct {
	Xk  string
	Box string
	// Plain rejection only (Box empty): St is "rejected".
	St  string
	Err string
}

func (EnrollReply) Type() MessageType { return TypeEnrollReply }

func (m EnrollReply) toMap() *Map {
	if m.Box != "" || m.St == "" {
		return version().Put("xk", m.Xk).Put("box", m.Box)
	}
	return version().Put("st", m.St).Put("err", m.Err)
}

// readEnrollReply is zod's union: the sealed form if it passes, else the plain rejection.
func readEnrollReply(o object) Message {
	sealed := &issues{}
	so := object{m: o.m, path: o.path, issues: sealed}
	reply := EnrollReply{
		Xk:  so.pattern("xk", curveKeyRegexp, curveKeyMessage),
		Box: so.pattern("box", boxRegexp, "box must be base64url"),
	}
	if len(sealed.list) == 0 && jsLength(reply.Box) > 12*1024 {
		sealed.add(so.at("box"), "too long")
	}
	if len(sealed.list) == 0 {
		return reply
	}
	plain := &issues{}
	po := object{m: o.m, path: o.path, issues: plain}
	rejected := EnrollReply{St: po.enum("st", []string{"rejected"}), Err: po.text("err", reasonText)}
	if len(plain.list) == 0 {
		return rejected
	}
	o.issues.add(o.path, "invalid input: neither a sealed reply ("+sealed.summary()+") nor a rejection ("+plain.summary()+")")
	return rejected
}

// Enrollment statuses.
var EnrollStatuses = []string{"approved", "pending", "rejected"}

// EnrollReplyBody is what the gateway answers an enrollment, sealed inside EnrollReply.Box.
type EnrollReplyBody struct {
	St    string
	Nid   string
	Wid   string
	Org   string
	JWT   string
	Err   *string
	Retry *int64
}

func (EnrollReplyBody) Type() MessageType { return TypeEnrollReplyBody }

func (m EnrollReplyBody) toMap() *Map {
	out := version().Put("st", m.St)
	putNonEmpty(out, "nid", m.Nid)
	putNonEmpty(out, "wid", m.Wid)
	putNonEmpty(out, "org", m.Org)
	putNonEmpty(out, "jwt", m.JWT)
	putOptString(out, "err", m.Err)
	putOptInt(out, "retry", m.Retry)
	return out
}

func readEnrollReplyBody(o object) Message {
	body := EnrollReplyBody{St: o.enum("st", EnrollStatuses)}
	if o.has("nid") {
		body.Nid = *o.optText("nid", text{1, 64})
	}
	body.Wid = o.optPattern("wid", wireIDRegexp, wireIDMessage)
	body.Org = o.optPattern("org", wireIDRegexp, wireIDMessage)
	body.JWT = o.jwt("jwt", false)
	body.Err = o.optText("err", reasonText)
	body.Retry = o.optInt("retry", 1, 3600)
	if body.St == "approved" && (!o.has("nid") || !o.has("wid") || !o.has("org") || !o.has("jwt")) {
		o.issues.add(o.path, "an approved reply carries nid, wid, org and jwt")
	}
	return body
}

// Hello opens every (re)connection and names the last applied revision.
type Hello struct {
	Av   string
	OS   string
	Arch string
	Boot string
	Rev  int64
}

func (Hello) Type() MessageType { return TypeHello }

func (m Hello) toMap() *Map {
	return version().Put("av", m.Av).Put("os", m.OS).Put("arch", m.Arch).Put("boot", m.Boot).Put("rev", m.Rev)
}

func readHello(o object) Message {
	return Hello{
		Av:   o.text("av", shortText),
		OS:   o.text("os", shortText),
		Arch: o.text("arch", shortText),
		Boot: o.text("boot", text{1, 64}),
		Rev:  o.int("rev", 0, Int4Max),
	}
}

// ArtifactRef names a version's artifact: Sha to verify, Obj to fetch when it differs.
type ArtifactRef struct {
	Sha string `json:"sha"`
	Obj string `json:"obj,omitempty"`
}

// Object is the name of the object to fetch.
func (a *ArtifactRef) Object() string {
	if a.Obj != "" {
		return a.Obj
	}
	return a.Sha
}

// DesiredPut is one app at one version in a delta.
type DesiredPut struct {
	App  string
	Ver  string
	Spec RunSpec
	Art  *ArtifactRef
}

// DeltaBody is the body shared by DesiredDelta and HelloReply.D.
type DeltaBody struct {
	From int64
	To   int64
	Put  []DesiredPut
	Del  []string
}

func (d *DeltaBody) putFields(out *Map) *Map {
	puts := make([]any, len(d.Put))
	for i, put := range d.Put {
		entry := NewMap().Put("app", put.App).Put("ver", put.Ver).Put("spec", put.Spec.toMap())
		if put.Art != nil {
			art := NewMap().Put("sha", put.Art.Sha)
			putNonEmpty(art, "obj", put.Art.Obj)
			entry.Put("art", art)
		}
		puts[i] = entry
	}
	del := d.Del
	if del == nil {
		del = []string{}
	}
	return out.Put("from", d.From).Put("to", d.To).Put("put", puts).Put("del", del)
}

func readDeltaBody(o object) DeltaBody {
	body := DeltaBody{From: o.int("from", 0, Int4Max), To: o.int("to", 0, Int4Max), Put: []DesiredPut{}}
	o.array("put", 0, 1024, func(value any, path string) {
		entry, ok := asObject(value, path, o.issues)
		if !ok {
			return
		}
		put := DesiredPut{App: entry.text("app", appNameText), Ver: entry.text("ver", versionText)}
		if spec, ok := entry.sub("spec"); ok {
			put.Spec = readRunSpec(spec)
		}
		if entry.has("art") {
			if art, ok := entry.sub("art"); ok {
				put.Art = &ArtifactRef{
					Sha: art.pattern("sha", sha256Regexp, sha256Message),
					Obj: art.optPattern("obj", sha256Regexp, sha256Message),
				}
			}
		}
		body.Put = append(body.Put, put)
	})
	body.Del = o.stringList("del", 0, 1024, appNameText, false)
	if body.From > body.To {
		o.issues.add(o.path, "delta from must not be after to")
	}
	return body
}

// DesiredDelta brings changes of the desired state down.
type DesiredDelta struct{ DeltaBody }

func (DesiredDelta) Type() MessageType { return TypeDesiredDelta }

func (m DesiredDelta) toMap() *Map { return m.putFields(version()) }

func readDesiredDelta(o object) Message { return DesiredDelta{readDeltaBody(o)} }

// HelloReply sets the intervals and carries what changed since Hello.Rev (D nil: up to date), and
// new credentials (JWT) when the Hello came on subjects that are not the node's current ones.
type HelloReply struct {
	Hb  int64
	Mx  int64
	D   *DeltaBody
	JWT string
	// RQ: reports quiet the heartbeat. The gateway counts each stored MetricsReport as a sign of
	// life, so no heartbeat is needed while metrics reports are acknowledged (docs/protocol.md).
	RQ bool
}

func (HelloReply) Type() MessageType { return TypeHelloReply }

func (m HelloReply) toMap() *Map {
	out := version().Put("hb", m.Hb).Put("mx", m.Mx)
	if m.D == nil {
		out.Put("d", nil)
	} else {
		out.Put("d", m.D.putFields(NewMap()))
	}
	putNonEmpty(out, "jwt", m.JWT)
	if m.RQ {
		out.Put("rq", true)
	}
	return out
}

func readHelloReply(o object) Message {
	reply := HelloReply{Hb: o.int("hb", 1, 3600), Mx: o.int("mx", 1, 86_400)}
	if value, ok := o.required("d"); ok && value != nil {
		if body, ok := asObject(value, o.at("d"), o.issues); ok {
			delta := readDeltaBody(body)
			reply.D = &delta
		}
	}
	reply.JWT = o.jwt("jwt", false)
	if quiet := o.optBool("rq"); quiet != nil {
		reply.RQ = *quiet
	}
	return reply
}

// CredentialsUpdate pushes new credentials down the node's downlink (it moved to another site).
type CredentialsUpdate struct{ JWT string }

func (CredentialsUpdate) Type() MessageType { return TypeCredentialsUpdate }

func (m CredentialsUpdate) toMap() *Map { return version().Put("jwt", m.JWT) }

func readCredentialsUpdate(o object) Message {
	return CredentialsUpdate{JWT: o.jwt("jwt", true)}
}

// Heartbeat is the liveness signal, numbered per connection from 0.
type Heartbeat struct{ S int64 }

func (Heartbeat) Type() MessageType { return TypeHeartbeat }

func (m Heartbeat) toMap() *Map { return version().Put("s", m.S) }

func readHeartbeat(o object) Message { return Heartbeat{S: o.int("s", 0, maxSafeInteger)} }

// DesiredAck acknowledges an applied revision.
type DesiredAck struct{ Rev int64 }

func (DesiredAck) Type() MessageType { return TypeDesiredAck }

func (m DesiredAck) toMap() *Map { return version().Put("rev", m.Rev) }

func readDesiredAck(o object) Message { return DesiredAck{Rev: o.int("rev", 0, Int4Max)} }

// Instance states.
const (
	StatePending  = "pending"
	StatePulling  = "pulling"
	StateStarting = "starting"
	StateRunning  = "running"
	StateFailed   = "failed"
	StateStopped  = "stopped"
)

// InstanceStates lists every instance state.
var InstanceStates = []string{StatePending, StatePulling, StateStarting, StateRunning, StateFailed, StateStopped}

// InstanceStatus is one app's instance in a StatusReport.
type InstanceStatus struct {
	App string
	Ver string
	St  string
	Why *string
	Rs  int64
	Tgt string
	Pb  *int64
	Pt  *int64
}

// StatusReport is a full snapshot of the node's instances.
type StatusReport struct {
	Seq  int64
	At   int64
	Inst []InstanceStatus
}

func (StatusReport) Type() MessageType { return TypeStatusReport }

func (m StatusReport) toMap() *Map {
	return version().Put("seq", m.Seq).Put("at", m.At).Put("inst", instancesToList(m.Inst))
}

func instancesToList(list []InstanceStatus) []any {
	inst := make([]any, len(list))
	for i, s := range list {
		inst[i] = s.toMap()
	}
	return inst
}

func (s InstanceStatus) toMap() *Map {
	entry := NewMap().Put("app", s.App)
	putNonEmpty(entry, "ver", s.Ver)
	entry.Put("st", s.St)
	putOptString(entry, "why", s.Why)
	entry.Put("rs", s.Rs)
	putNonEmpty(entry, "tgt", s.Tgt)
	putOptInt(entry, "pb", s.Pb)
	putOptInt(entry, "pt", s.Pt)
	return entry
}

// readInstances reads an array of instance statuses (at most max).
func readInstances(o object, key string, max int) []InstanceStatus {
	list := []InstanceStatus{}
	o.array(key, 0, max, func(value any, path string) {
		entry, ok := asObject(value, path, o.issues)
		if !ok {
			return
		}
		list = append(list, readInstanceStatus(entry))
	})
	return list
}

func readInstanceStatus(entry object) InstanceStatus {
	status := InstanceStatus{App: entry.text("app", appNameText)}
	if entry.has("ver") {
		status.Ver = *entry.optText("ver", versionText)
	}
	status.St = entry.enum("st", InstanceStates)
	status.Why = entry.optText("why", reasonText)
	status.Rs = entry.int("rs", 0, Int4Max)
	if entry.has("tgt") {
		status.Tgt = *entry.optText("tgt", versionText)
	}
	status.Pb = entry.optInt("pb", 0, maxSafeInteger)
	status.Pt = entry.optInt("pt", 0, maxSafeInteger)
	return status
}

func readStatusReport(o object) Message {
	seq, at := o.int("seq", 1, maxSafeInteger), o.int("at", 0, maxSafeInteger)
	return StatusReport{Seq: seq, At: at, Inst: readInstances(o, "inst", 512)}
}

// ControlMessageTypes are the types control bytes are counted by (MetricsReport.ctl).
var ControlMessageTypes = []string{"enroll", "hello", "hb", "st", "mx", "ack", "delta", "art", "cmd"}

// ControlCount is the bytes sent and received for one control message type.
type ControlCount struct {
	Type     string
	Sent     int64
	Received int64
}

// NetInterface is one interface's cumulative bytes.
type NetInterface struct {
	If string
	Rx int64
	Tx int64
}

// AppUsage is one app's CPU (‰ of one core over the interval) and resident memory.
type AppUsage struct {
	App string
	CPU int64
	Mem int64
}

// MetricsReport carries host, per-app and control-traffic numbers.
type MetricsReport struct {
	Seq  int64
	At   int64
	CPU  int64
	Mu   int64
	Mt   int64
	Du   int64
	Dt   int64
	RTT  *int64
	Net  []NetInterface
	Apps []AppUsage
	Ctl  []ControlCount
}

func (MetricsReport) Type() MessageType { return TypeMetricsReport }

func (m MetricsReport) toMap() *Map {
	out := version().Put("seq", m.Seq).Put("at", m.At).Put("cpu", m.CPU).
		Put("mu", m.Mu).Put("mt", m.Mt).Put("du", m.Du).Put("dt", m.Dt)
	putOptInt(out, "rtt", m.RTT)
	net := make([]any, len(m.Net))
	for i, n := range m.Net {
		net[i] = NewMap().Put("if", n.If).Put("rx", n.Rx).Put("tx", n.Tx)
	}
	apps := make([]any, len(m.Apps))
	for i, a := range m.Apps {
		apps[i] = NewMap().Put("app", a.App).Put("cpu", a.CPU).Put("mem", a.Mem)
	}
	ctl := NewMap()
	for _, c := range m.Ctl {
		ctl.Put(c.Type, []any{c.Sent, c.Received})
	}
	return out.Put("net", net).Put("apps", apps).Put("ctl", ctl)
}

func readMetricsReport(o object) Message {
	report := MetricsReport{
		Seq: o.int("seq", 1, maxSafeInteger),
		At:  o.int("at", 0, maxSafeInteger),
		CPU: o.int("cpu", 0, 1000),
		Mu:  o.int("mu", 0, maxSafeInteger),
		Mt:  o.int("mt", 0, maxSafeInteger),
		Du:  o.int("du", 0, maxSafeInteger),
		Dt:  o.int("dt", 0, maxSafeInteger),
		RTT: o.optInt("rtt", 0, maxSafeInteger),
		Net: []NetInterface{}, Apps: []AppUsage{}, Ctl: []ControlCount{},
	}
	o.array("net", 0, 4, func(value any, path string) {
		if entry, ok := asObject(value, path, o.issues); ok {
			report.Net = append(report.Net, NetInterface{
				If: entry.text("if", text{1, 32}),
				Rx: entry.int("rx", 0, maxSafeInteger),
				Tx: entry.int("tx", 0, maxSafeInteger),
			})
		}
	})
	o.array("apps", 0, 64, func(value any, path string) {
		if entry, ok := asObject(value, path, o.issues); ok {
			report.Apps = append(report.Apps, AppUsage{
				App: entry.text("app", appNameText),
				CPU: entry.int("cpu", 0, maxSafeInteger),
				Mem: entry.int("mem", 0, maxSafeInteger),
			})
		}
	})
	if ctl, ok := o.sub("ctl"); ok {
		for i, name := range ctl.m.keys {
			path := ctl.at(name)
			if _, ok := checkEnum(name, path, ControlMessageTypes, o.issues); !ok {
				continue
			}
			pair, isList := ctl.m.values[i].([]any)
			if !isList || len(pair) != 2 {
				o.issues.add(path, "expected a [sent, received] pair")
				continue
			}
			sent, _ := checkInt(pair[0], atIndex(path, 0), 0, maxSafeInteger, o.issues)
			received, _ := checkInt(pair[1], atIndex(path, 1), 0, maxSafeInteger, o.issues)
			report.Ctl = append(report.Ctl, ControlCount{Type: name, Sent: sent, Received: received})
		}
	}
	return report
}

// ArtifactChunkErrors are the typed refusals of a chunk request.
var ArtifactChunkErrors = []string{"not_found", "not_allowed", "too_large", "bad_range", "unavailable"}

// ArtifactChunkRequest asks for len bytes of an object from off (off = size: just the size).
type ArtifactChunkRequest struct {
	Obj string
	Off int64
	Len int64
}

func (ArtifactChunkRequest) Type() MessageType { return TypeArtifactChunkRequest }

func (m ArtifactChunkRequest) toMap() *Map {
	return version().Put("obj", m.Obj).Put("off", m.Off).Put("len", m.Len)
}

func readArtifactChunkRequest(o object) Message {
	return ArtifactChunkRequest{
		Obj: o.pattern("obj", sha256Regexp, sha256Message),
		Off: o.int("off", 0, MaxArtifactBytes),
		Len: o.int("len", 1, MaxArtifactChunkBytes),
	}
}

// ArtifactChunkReply carries Off, Size and Data, or Err (and Why).
type ArtifactChunkReply struct {
	Off  *int64
	Size *int64
	Data []byte
	Err  string
	Why  *string
}

func (ArtifactChunkReply) Type() MessageType { return TypeArtifactChunkReply }

func (m ArtifactChunkReply) toMap() *Map {
	out := version()
	putOptInt(out, "off", m.Off)
	putOptInt(out, "size", m.Size)
	if m.Data != nil {
		out.Put("data", m.Data)
	}
	putNonEmpty(out, "err", m.Err)
	putOptString(out, "why", m.Why)
	return out
}

func readArtifactChunkReply(o object) Message {
	reply := ArtifactChunkReply{Off: o.optInt("off", 0, maxSafeInteger), Size: o.optInt("size", 0, maxSafeInteger)}
	if value, present := o.m.Get("data"); present {
		data, ok := value.([]byte)
		switch {
		case !ok:
			o.issues.add(o.at("data"), "data must be binary")
		case len(data) > MaxArtifactChunkBytes:
			o.issues.add(o.at("data"), "a chunk carries at most 131072 bytes")
		}
		if data == nil {
			data = []byte{}
		}
		reply.Data = data
	}
	reply.Err = o.optEnum("err", ArtifactChunkErrors)
	reply.Why = o.optText("why", reasonText)
	hasErr := o.has("err")
	if hasErr && (o.has("off") || o.has("data")) || !hasErr && (!o.has("off") || !o.has("size") || !o.has("data")) {
		o.issues.add(o.path, "a chunk reply carries either err, or off, size and data")
	}
	return reply
}

func version() *Map { return NewMap().Put("v", int64(Version)) }

var readers = map[MessageType]func(object) Message{
	TypeEnrollRequest:        readEnrollRequest,
	TypeEnrollReply:          readEnrollReply,
	TypeEnrollReplyBody:      readEnrollReplyBody,
	TypeHello:                readHello,
	TypeHelloReply:           readHelloReply,
	TypeCredentialsUpdate:    readCredentialsUpdate,
	TypeHeartbeat:            readHeartbeat,
	TypeDesiredDelta:         readDesiredDelta,
	TypeDesiredAck:           readDesiredAck,
	TypeStatusReport:         readStatusReport,
	TypeMetricsReport:        readMetricsReport,
	TypeArtifactChunkRequest: readArtifactChunkRequest,
	TypeArtifactChunkReply:   readArtifactChunkReply,
	TypeCommandRequest:       readCommandRequest,
	TypeCommandReply:         readCommandReply,
}
