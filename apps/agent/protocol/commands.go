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

// Streams and probes ride the same path (commands.ts STREAM_COMMANDS; docs/protocol.md "Live logs",
// "Network probes"); they are not operator one-shot commands.
const (
	CmdLogs   = "logs"
	CmdCredit = "credit"
	CmdCancel = "cancel"
	CmdProbe  = "probe"
)

// WireCommands is every `cmd` a CommandRequest may carry, in the order of commands.ts.
var WireCommands = []string{CmdRestart, CmdStop, CmdStart, CmdHealth, CmdDiag, CmdReport, CmdLogs, CmdCredit, CmdCancel, CmdProbe}

// Bounds of live logs and probes (commands.ts).
const (
	LogMaxTailLines     = 1000
	LogMaxLineBytes     = 2048
	LogPartBytes        = 16 * 1024
	LogMaxCreditBytes   = 256 * 1024
	LogMaxBudgetBytes   = 8 * 1024 * 1024
	LogSessionLeaseMs   = 30_000
	AgentMaxLogSessions = 4
	AppLogRingBytes     = 256 * 1024
	ProbeMaxBytes       = 8 * 1024 * 1024
	ProbeMaxMs          = 15_000
	ProbeChunkBytes     = 16 * 1024
	ProbeWindow         = 4
)

// Why a log session ended (`end` of its last part).
const (
	LogEndDone      = "done"
	LogEndBudget    = "budget"
	LogEndCancelled = "cancelled"
	LogEndLapsed    = "lapsed"
	LogEndAppGone   = "app_gone"
	LogEndShutdown  = "shutdown"
)

// LogEndReasons lists every `end`, in the order of commands.ts.
var LogEndReasons = []string{LogEndDone, LogEndBudget, LogEndCancelled, LogEndLapsed, LogEndAppGone, LogEndShutdown}

// ProbeTargets: the site's leaf server, or the hub.
var ProbeTargets = []string{"leaf", "hub"}

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
	// logs: lines of history (N), follow (F), byte budget (Bud); logs and credit: credit (Cr).
	N   *int64
	F   *bool
	Bud *int64
	Cr  *int64
	// probe: where to, bytes and milliseconds at most.
	To string
	By *int64
	Ms *int64
}

func (CommandRequest) Type() MessageType { return TypeCommandRequest }

func (m CommandRequest) toMap() *Map {
	out := version().Put("id", m.ID).Put("cmd", m.Cmd)
	putNonEmpty(out, "app", m.App)
	putOptInt(out, "n", m.N)
	if m.F != nil {
		out.Put("f", *m.F)
	}
	putOptInt(out, "bud", m.Bud)
	putOptInt(out, "cr", m.Cr)
	putNonEmpty(out, "to", m.To)
	putOptInt(out, "by", m.By)
	putOptInt(out, "ms", m.Ms)
	return out
}

func readCommandRequest(o object) Message {
	request := CommandRequest{ID: o.pattern("id", commandIDRegexp, commandIDMessage), Cmd: o.enum("cmd", WireCommands)}
	if app := o.optText("app", appNameText); app != nil {
		request.App = *app
	}
	request.N = o.optInt("n", 0, LogMaxTailLines)
	request.F = o.optBool("f")
	request.Bud = o.optInt("bud", 1, LogMaxBudgetBytes)
	request.Cr = o.optInt("cr", 0, LogMaxCreditBytes)
	request.To = o.optEnum("to", ProbeTargets)
	request.By = o.optInt("by", 1, ProbeMaxBytes)
	request.Ms = o.optInt("ms", 1, ProbeMaxMs)
	if (IsAppCommand(request.Cmd) || request.Cmd == CmdLogs) && !o.has("app") {
		o.issues.add(o.at("app"), "restart, stop, start, health and logs name an app")
	}
	if request.Cmd == CmdLogs && request.Bud == nil {
		o.issues.add(o.at("bud"), "logs carries its byte budget bud")
	}
	if request.Cmd == CmdCredit && request.Cr == nil {
		o.issues.add(o.at("cr"), "credit carries cr")
	}
	if request.Cmd == CmdProbe && (request.To == "" || request.By == nil || request.Ms == nil) {
		o.issues.add(o.at("to"), "probe carries to, by and ms")
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
	Lg   *LogPart
	Prb  *ProbeResult
}

// LogPart is one part of a live log session's stream.
type LogPart struct {
	P    int64
	L    []string
	Lost int64
	End  string
}

// ProbeResult is what a throughput probe measured.
type ProbeResult struct {
	To  string
	By  int64
	Ms  int64
	Via *string
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
	if m.Lg != nil {
		lines := m.Lg.L
		if lines == nil {
			lines = []string{}
		}
		lg := NewMap().Put("p", m.Lg.P).Put("l", strings2any(lines))
		if m.Lg.Lost > 0 {
			lg.Put("lost", m.Lg.Lost)
		}
		putNonEmpty(lg, "end", m.Lg.End)
		out.Put("lg", lg)
	}
	if m.Prb != nil {
		prb := NewMap().Put("to", m.Prb.To).Put("by", m.Prb.By).Put("ms", m.Prb.Ms)
		putOptString(prb, "via", m.Prb.Via)
		out.Put("prb", prb)
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
	if o.has("lg") {
		if lg, ok := o.sub("lg"); ok {
			part := &LogPart{P: lg.int("p", 0, maxSafeInteger), End: lg.optEnum("end", LogEndReasons)}
			part.L = lg.stringList("l", 0, LogMaxTailLines, text{0, LogMaxLineBytes + 64}, false)
			if lost := lg.optInt("lost", 0, maxSafeInteger); lost != nil {
				part.Lost = *lost
			}
			reply.Lg = part
		}
	}
	if o.has("prb") {
		if prb, ok := o.sub("prb"); ok {
			reply.Prb = &ProbeResult{
				To: prb.enum("to", ProbeTargets), By: prb.int("by", 0, maxSafeInteger),
				Ms: prb.int("ms", 0, maxSafeInteger), Via: prb.optText("via", text{0, 256}),
			}
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

// DownlinkMessageType tells what a payload on the node's downlink is: a CommandRequest (a map with
// a `cmd` key), a CredentialsUpdate (a map with a `jwt` key) or a DesiredDelta (anything else; its
// decoding says what is wrong with it). Only a payload within the two smaller types' limit is
// looked into.
func DownlinkMessageType(data []byte) MessageType {
	limit := max(SizeLimits[TypeCommandRequest], SizeLimits[TypeCredentialsUpdate])
	if len(data) > limit {
		return TypeDesiredDelta
	}
	tree, err := decodeTree(data, limit)
	if err != nil {
		return TypeDesiredDelta
	}
	if m, ok := tree.(*Map); ok {
		if _, has := m.Get("cmd"); has {
			return TypeCommandRequest
		}
		if _, has := m.Get("jwt"); has {
			return TypeCredentialsUpdate
		}
	}
	return TypeDesiredDelta
}
