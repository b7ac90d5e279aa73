package protocol

import (
	"fmt"
	"regexp"
	"slices"
)

// Node operations (issue 13, docs/protocol.md "Commands"; commands.ts on the TypeScript side): a
// CommandRequest comes down on the node's one downlink subject, told from a DesiredDelta by its
// `cmd` key; the CommandReply goes up on the node's own `ef.up.<wid>.cmd`.

// The commands a node takes.
const (
	CmdRestart = "restart"
	CmdStop    = "stop"
	CmdStart   = "start"
	CmdHealth  = "health"
	CmdDiag    = "diag"
	CmdReport  = "report"
)

// Commands lists every command, in the order of commands.ts.
var Commands = []string{CmdRestart, CmdStop, CmdStart, CmdHealth, CmdDiag, CmdReport}

// AppCommands act on one app (`app` required).
var AppCommands = []string{CmdRestart, CmdStop, CmdStart, CmdHealth}

// IsAppCommand tells whether cmd acts on one app.
func IsAppCommand(cmd string) bool { return slices.Contains(AppCommands, cmd) }

// Why a node refused or failed a command.
const (
	CmdErrUnknownApp    = "unknown_app"
	CmdErrNotRunning    = "not_running"
	CmdErrNoHealthCheck = "no_health_check"
	CmdErrUnsupported   = "unsupported"
	CmdErrFailed        = "failed"
	CmdErrBusy          = "busy"
)

// CommandErrors lists every `err` of a CommandReply, in the order of commands.ts.
var CommandErrors = []string{CmdErrUnknownApp, CmdErrNotRunning, CmdErrNoHealthCheck, CmdErrUnsupported, CmdErrFailed, CmdErrBusy}

// Bounds of commands (commands.ts).
const (
	AgentMaxCommandsInFlight = 4
	DiagMaxLogLines          = 200
	DiagMaxLogLineChars      = 512
	DiagMaxConfigEntries     = 64
	CommandReplyLimit        = 128 * 1024
)

var commandIDRegexp = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

const commandIDMessage = "id must be [A-Za-z0-9_-]{1,32}"

// CommandRequest asks the node to do one thing; App names the app of an app command.
type CommandRequest struct {
	ID  string
	Cmd string
	App string
}

func (CommandRequest) Type() MessageType { return TypeCommandRequest }

func (m CommandRequest) toMap() *Map {
	out := version().Put("id", m.ID).Put("cmd", m.Cmd)
	putNonEmpty(out, "app", m.App)
	return out
}

func readCommandRequest(o object) Message {
	request := CommandRequest{ID: o.pattern("id", commandIDRegexp, commandIDMessage), Cmd: o.enum("cmd", Commands)}
	if app := o.optText("app", appNameText); app != nil {
		request.App = *app
	}
	if IsAppCommand(request.Cmd) && !o.has("app") {
		o.issues.add(o.at("app"), "restart, stop, start and health name an app")
	}
	return request
}

// HealthResult is the outcome of a health check run on request.
type HealthResult struct {
	OK  bool
	Why *string
}

// ReportSequences are the sequences of the status and metrics reports a `report` queued.
type ReportSequences struct {
	St int64
	Mx int64
}

// Diagnostics is a node's diagnostics bundle: no secrets, bounded.
type Diagnostics struct {
	Av   string
	OS   string
	Arch string
	Up   int64
	Cfg  StringMap
	Du   int64
	Dt   int64
	Log  []string
	Inst []InstanceStatus
}

func (d *Diagnostics) toMap() *Map {
	cfg := d.Cfg
	if cfg == nil {
		cfg = StringMap{}
	}
	log := d.Log
	if log == nil {
		log = []string{}
	}
	return NewMap().Put("av", d.Av).Put("os", d.OS).Put("arch", d.Arch).Put("up", d.Up).
		Put("cfg", cfg.toMap()).Put("du", d.Du).Put("dt", d.Dt).Put("log", strings2any(log)).
		Put("inst", instancesToList(d.Inst))
}

// CommandReply answers one CommandRequest: OK with result fields, or Err and Why.
type CommandReply struct {
	ID   string
	OK   bool
	Err  string
	Why  *string
	Inst *InstanceStatus
	Hl   *HealthResult
	Diag *Diagnostics
	Rep  *ReportSequences
}

func (CommandReply) Type() MessageType { return TypeCommandReply }

func (m CommandReply) toMap() *Map {
	out := version().Put("id", m.ID).Put("ok", m.OK)
	putNonEmpty(out, "err", m.Err)
	putOptString(out, "why", m.Why)
	if m.Inst != nil {
		out.Put("inst", m.Inst.toMap())
	}
	if m.Hl != nil {
		hl := NewMap().Put("ok", m.Hl.OK)
		putOptString(hl, "why", m.Hl.Why)
		out.Put("hl", hl)
	}
	if m.Diag != nil {
		out.Put("diag", m.Diag.toMap())
	}
	if m.Rep != nil {
		out.Put("rep", NewMap().Put("st", m.Rep.St).Put("mx", m.Rep.Mx))
	}
	return out
}

func readCommandReply(o object) Message {
	reply := CommandReply{ID: o.pattern("id", commandIDRegexp, commandIDMessage)}
	if ok, present := o.m.Get("ok"); !present {
		o.issues.add(o.at("ok"), "expected boolean, received undefined")
	} else if b, isBool := ok.(bool); !isBool {
		o.issues.add(o.at("ok"), "expected boolean, received "+describe(ok))
	} else {
		reply.OK = b
	}
	reply.Err = o.optEnum("err", CommandErrors)
	reply.Why = o.optText("why", reasonText)
	if o.has("inst") {
		if entry, ok := o.sub("inst"); ok {
			status := readInstanceStatus(entry)
			reply.Inst = &status
		}
	}
	if o.has("hl") {
		if hl, ok := o.sub("hl"); ok {
			result := HealthResult{Why: hl.optText("why", reasonText)}
			if b := hl.optBool("ok"); b != nil {
				result.OK = *b
			} else {
				hl.issues.add(hl.at("ok"), "expected boolean, received undefined")
			}
			reply.Hl = &result
		}
	}
	if o.has("diag") {
		if d, ok := o.sub("diag"); ok {
			reply.Diag = readDiagnostics(d)
		}
	}
	if o.has("rep") {
		if rep, ok := o.sub("rep"); ok {
			reply.Rep = &ReportSequences{St: rep.int("st", 0, maxSafeInteger), Mx: rep.int("mx", 0, maxSafeInteger)}
		}
	}
	if reply.OK == o.has("err") {
		o.issues.add(o.at("err"), "a failed reply carries err, a successful one does not")
	}
	return reply
}

func readDiagnostics(o object) *Diagnostics {
	d := &Diagnostics{
		Av:   o.text("av", shortText),
		OS:   o.text("os", shortText),
		Arch: o.text("arch", shortText),
		Up:   o.int("up", 0, maxSafeInteger),
	}
	if _, ok := o.required("cfg"); ok {
		d.Cfg = o.record("cfg", func(name, path string) bool {
			_, ok := checkText(name, path, text{1, 64}, o.issues)
			return ok
		}, text{0, 512})
		if len(d.Cfg) > DiagMaxConfigEntries {
			o.issues.add(o.at("cfg"), fmt.Sprintf("at most %d settings", DiagMaxConfigEntries))
		}
	}
	d.Du = o.int("du", 0, maxSafeInteger)
	d.Dt = o.int("dt", 0, maxSafeInteger)
	d.Log = o.stringList("log", 0, DiagMaxLogLines, text{0, DiagMaxLogLineChars}, false)
	d.Inst = readInstances(o, "inst", 512)
	return d
}

// DownlinkMessageType tells what a payload on `ef.down.<wid>` is: a CommandRequest (a map with a
// `cmd` key) or a DesiredDelta (anything else; its decoding says what is wrong with it).
func DownlinkMessageType(data []byte) MessageType {
	if len(data) > SizeLimits[TypeCommandRequest] {
		return TypeDesiredDelta
	}
	tree, err := decodeTree(data, SizeLimits[TypeCommandRequest])
	if err != nil {
		return TypeDesiredDelta
	}
	if m, ok := tree.(*Map); ok {
		if _, has := m.Get("cmd"); has {
			return TypeCommandRequest
		}
	}
	return TypeDesiredDelta
}
