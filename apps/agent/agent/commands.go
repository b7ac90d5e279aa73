package agent

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"

	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// --- commands (docs/protocol.md "Commands"; commands.ts of the reference agent) -----------------

// onDownlink routes the one downlink subscription: commands, credentials and desired-state deltas.
func (a *Agent) onDownlink(msg *nats.Msg) {
	switch protocol.DownlinkMessageType(msg.Data) {
	case protocol.TypeCommandRequest:
		a.onCommand(msg)
	case protocol.TypeCredentialsUpdate:
		a.onCredentialsUpdate(msg)
	default:
		a.onDelta(msg)
	}
}

// siteSetting names the node's site token in diagnostics.
func siteSetting(address protocol.Address) string {
	if address.Layout1() {
		return "(subject layout 1)"
	}
	return address.Site
}

// onCommand answers an operator's command on the node's own `ef.up.<site>.<wid>.cmd`, at most
// AgentMaxCommandsInFlight at once (more are answered busy).
func (a *Agent) onCommand(msg *nats.Msg) {
	a.control.received("cmd", len(msg.Subject)+len(msg.Data)+framingBytes)
	request, err := protocol.DecodeAs[protocol.CommandRequest](msg.Data)
	if err != nil {
		a.reject(err)
		return
	}
	if request.Cmd == protocol.CmdLogs || request.Cmd == protocol.CmdCredit || request.Cmd == protocol.CmdCancel {
		a.onLogCommand(request)
		return
	}
	if a.commandsInFlight.Add(1) > protocol.AgentMaxCommandsInFlight {
		a.commandsInFlight.Add(-1)
		why := fmt.Sprintf("the node already runs %d commands", protocol.AgentMaxCommandsInFlight)
		a.sendCommandReply(protocol.CommandReply{ID: request.ID, Err: protocol.CmdErrBusy, Why: &why})
		return
	}
	a.logger.Info("command", "id", request.ID, "cmd", request.Cmd, "app", request.App)
	go func() {
		defer a.commandsInFlight.Add(-1)
		reply := a.answerCommand(request)
		reply.ID = request.ID
		a.sendCommandReply(reply)
	}()
}

func (a *Agent) answerCommand(request protocol.CommandRequest) (reply protocol.CommandReply) {
	defer func() {
		// A failing command is a failed reply, never a crashed agent.
		if recovered := recover(); recovered != nil {
			why := clipText(fmt.Sprint(recovered), 256)
			reply = protocol.CommandReply{Err: protocol.CmdErrFailed, Why: &why}
		}
	}()
	switch {
	case protocol.IsAppCommand(request.Cmd):
		return a.options.Runtime.Operate(request.App, request.Cmd)
	case request.Cmd == protocol.CmdProbe:
		return a.runProbe(request)
	case request.Cmd == protocol.CmdDiag:
		diag := a.diagnostics()
		return protocol.CommandReply{OK: true, Diag: &diag}
	default:
		st, mx := a.forceReport()
		return protocol.CommandReply{OK: true, Rep: &protocol.ReportSequences{St: st, Mx: mx}}
	}
}

func (a *Agent) sendCommandReply(reply protocol.CommandReply) {
	nc := a.conn()
	if nc == nil || !a.connected.Load() {
		return
	}
	payload := encodeCommandReply(reply)
	subject := a.addr().UpSubject(protocol.UpCmd)
	if err := nc.Publish(subject, payload); err != nil {
		a.logger.Warn("command reply not sent", "id", reply.ID, "error", err.Error())
		return
	}
	a.control.sent("cmd", len(subject)+len(payload)+framingBytes)
}

// encodeCommandReply encodes within the CommandReply limit: a diagnostics bundle loses its
// oldest log lines until it fits.
func encodeCommandReply(reply protocol.CommandReply) []byte {
	for {
		payload, err := protocol.Encode(reply)
		if err == nil {
			return payload
		}
		if reply.Diag == nil || len(reply.Diag.Log) == 0 {
			why := clipText(fmt.Sprintf("reply does not fit in %d bytes: %v", protocol.CommandReplyLimit, err), 256)
			return protocol.MustEncode(protocol.CommandReply{ID: reply.ID, Err: protocol.CmdErrFailed, Why: &why})
		}
		diag := *reply.Diag
		diag.Log = diag.Log[(len(diag.Log)+3)/4:]
		reply.Diag = &diag
	}
}

func (a *Agent) diagnostics() protocol.Diagnostics {
	host, err := a.options.HostSampler.Sample()
	if err != nil {
		a.logger.Warn("host sample incomplete", "error", err.Error())
	}
	a.stateMu.Lock()
	applied := a.state.Rev
	a.stateMu.Unlock()
	cfg := protocol.StringMap{
		{Key: "servers", Value: strings.Join(a.options.Servers, ",")},
		{Key: "wid", Value: a.addr().Wid},
		{Key: "site", Value: siteSetting(a.addr())},
		{Key: "heartbeatSeconds", Value: fmt.Sprint(time.Duration(a.heartbeatEvery.Load()).Seconds())},
		{Key: "metricsSeconds", Value: fmt.Sprint(time.Duration(a.metricsEvery.Load()).Seconds())},
		{Key: "appliedRevision", Value: fmt.Sprint(applied)},
		{Key: "outboxRecords", Value: fmt.Sprint(a.options.Outbox.Stats().Records)},
	}
	for _, kv := range a.options.Settings {
		if len(cfg) < protocol.DiagMaxConfigEntries {
			cfg = append(cfg, protocol.KV{Key: kv.Key, Value: clipText(kv.Value, 512)})
		}
	}
	return protocol.Diagnostics{
		Av: a.options.AgentVersion, OS: a.options.OS, Arch: a.options.Arch,
		Up:  int64(time.Since(a.startedAt).Seconds()),
		Cfg: cfg, Du: host.Du, Dt: host.Dt,
		Log:  a.recent.snapshot(),
		Inst: a.options.Runtime.Instances(),
	}
}

// forceReport queues a status snapshot and a metrics report now; their sequences.
func (a *Agent) forceReport() (int64, int64) {
	a.reportStatus(true)
	a.reportMetrics()
	a.stateMu.Lock()
	defer a.stateMu.Unlock()
	return a.state.Seq.St, a.state.Seq.Mx
}

// --- recent log --------------------------------------------------------------------------------

// recentLog keeps the agent's last log lines for diagnostics bundles.
type recentLog struct {
	mu    sync.Mutex
	lines []string
}

func (r *recentLog) push(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, clipText(strings.ReplaceAll(line, "\x00", ""), protocol.DiagMaxLogLineChars))
	if len(r.lines) > protocol.DiagMaxLogLines {
		r.lines = append(r.lines[:0:0], r.lines[len(r.lines)-protocol.DiagMaxLogLines:]...)
	}
}

func (r *recentLog) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string{}, r.lines...)
}

// teeHandler records every log line in a recentLog and passes it on.
type teeHandler struct {
	inner  slog.Handler
	recent *recentLog
	attrs  string
}

// Enabled: the ring keeps info and above whatever the inner handler's level.
func (h teeHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelInfo || h.inner.Enabled(ctx, level)
}

func (h teeHandler) Handle(ctx context.Context, record slog.Record) error {
	var line strings.Builder
	line.WriteString(record.Time.UTC().Format(time.RFC3339))
	line.WriteString(" " + strings.ToLower(record.Level.String()) + " " + record.Message + h.attrs)
	record.Attrs(func(attr slog.Attr) bool {
		line.WriteString(" " + attr.String())
		return true
	})
	if record.Level >= slog.LevelInfo {
		h.recent.push(line.String())
	}
	if !h.inner.Enabled(ctx, record.Level) {
		return nil
	}
	return h.inner.Handle(ctx, record)
}

func (h teeHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	extra := h.attrs
	for _, attr := range attrs {
		extra += " " + attr.String()
	}
	return teeHandler{inner: h.inner.WithAttrs(attrs), recent: h.recent, attrs: extra}
}

func (h teeHandler) WithGroup(name string) slog.Handler {
	return teeHandler{inner: h.inner.WithGroup(name), recent: h.recent, attrs: h.attrs}
}

// clipText shortens text to at most max characters (UTF-16 units, as the schema counts them).
func clipText(text string, max int) string {
	if utf8.RuneCountInString(text) <= max/2 {
		return text
	}
	units := 0
	for i, r := range text {
		size := 1
		if r > 0xFFFF {
			size = 2
		}
		if units+size > max-1 {
			return text[:i] + "…"
		}
		units += size
	}
	return text
}
