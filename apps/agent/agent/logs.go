package agent

import (
	"fmt"
	"sync"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/protocol"
	"github.com/edgefleet/edgefleet/apps/agent/runtime"
)

// Live log sessions and throughput probes (docs/protocol.md "Live logs", "Network probes";
// log-session.ts and probe.ts on the TypeScript side).

// appLogs is what a runtime offers for live logs (runtime.Runtime and runtime.Hollow do).
type appLogs interface {
	AppLog(app string) *runtime.AppLog
}

// logSessionMaxPendingBytes bounds the lines a session holds while it waits for credit.
const logSessionMaxPendingBytes = 4 * protocol.LogPartBytes

// logSession is one live log session: part 0 (history) at once, then parts while it holds credit,
// never more than its budget; ends itself when nothing was heard for the lease.
type logSession struct {
	id     string
	follow bool
	budget int64
	send   func(protocol.CommandReply)
	onEnd  func(reason string)

	mu           sync.Mutex
	pending      []runtime.LogLine
	pendingBytes int
	credit       int64
	sent         int64
	part         int64
	lost         int64
	lastHeard    time.Time
	ended        bool
	unsubscribe  func()
	batch        *time.Timer
}

func (s *logSession) start(log *runtime.AppLog, tail int) {
	s.mu.Lock()
	for _, line := range log.Tail(tail) {
		s.enqueueLocked(line)
	}
	if s.follow {
		s.unsubscribe = log.Subscribe(s.onLine)
	}
	lines := s.takeLocked()
	done := !s.follow && len(s.pending) == 0
	var reply *protocol.CommandReply
	if done {
		reply = s.partLocked(lines, protocol.LogEndDone)
	} else {
		reply = s.partLocked(lines, "")
		if end := s.budgetEndLocked(); end != nil {
			s.mu.Unlock()
			s.send(*reply)
			s.send(*end)
			s.onEnd(protocol.LogEndBudget)
			return
		}
	}
	s.mu.Unlock()
	s.send(*reply)
	if done {
		s.onEnd(protocol.LogEndDone)
	}
}

func (s *logSession) onLine(line runtime.LogLine) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.enqueueLocked(line)
	if s.batch == nil {
		s.batch = time.AfterFunc(100*time.Millisecond, func() {
			s.mu.Lock()
			s.batch = nil
			s.mu.Unlock()
			s.pump()
		})
	}
}

func (s *logSession) enqueueLocked(line runtime.LogLine) {
	s.pending = append(s.pending, line)
	s.pendingBytes += line.Bytes
	for s.pendingBytes > logSessionMaxPendingBytes && len(s.pending) > 1 {
		s.pendingBytes -= s.pending[0].Bytes
		s.pending = s.pending[1:]
		s.lost++
	}
}

func (s *logSession) grant(bytes int64) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.lastHeard = time.Now()
	s.credit = min(protocol.LogMaxCreditBytes, s.credit+bytes)
	s.mu.Unlock()
	s.pump()
}

// pump sends what the credit allows; ends the session at its budget (or when history is done).
func (s *logSession) pump() {
	for {
		s.mu.Lock()
		if s.ended || len(s.pending) == 0 {
			s.mu.Unlock()
			return
		}
		if end := s.budgetEndLocked(); end != nil {
			s.mu.Unlock()
			s.send(*end)
			s.onEnd(protocol.LogEndBudget)
			return
		}
		lines := s.takeLocked()
		if len(lines) == 0 {
			s.mu.Unlock()
			return
		}
		done := !s.follow && len(s.pending) == 0
		reason := ""
		if done {
			reason = protocol.LogEndDone
		}
		reply := s.partLocked(lines, reason)
		s.mu.Unlock()
		s.send(*reply)
		if done {
			s.onEnd(reason)
			return
		}
	}
}

// budgetEndLocked ends the session when the next line would not fit the budget.
func (s *logSession) budgetEndLocked() *protocol.CommandReply {
	if len(s.pending) == 0 || s.sent+int64(s.pending[0].Bytes) <= s.budget {
		return nil
	}
	return s.partLocked(nil, protocol.LogEndBudget)
}

func (s *logSession) takeLocked() []string {
	var lines []string
	bytes := 0
	for len(s.pending) > 0 {
		line := s.pending[0]
		if bytes+line.Bytes > protocol.LogPartBytes && len(lines) > 0 {
			break
		}
		if int64(line.Bytes) > s.credit || s.sent+int64(line.Bytes) > s.budget {
			break
		}
		s.pending = s.pending[1:]
		s.pendingBytes -= line.Bytes
		s.credit -= int64(line.Bytes)
		s.sent += int64(line.Bytes)
		bytes += line.Bytes
		lines = append(lines, line.Text)
	}
	return lines
}

// partLocked builds the next part; with an end reason it also ends the session.
func (s *logSession) partLocked(lines []string, end string) *protocol.CommandReply {
	part := &protocol.LogPart{P: s.part, L: lines, Lost: s.lost, End: end}
	s.part++
	s.lost = 0
	if end != "" {
		s.ended = true
		if s.unsubscribe != nil {
			s.unsubscribe()
		}
		if s.batch != nil {
			s.batch.Stop()
		}
		s.pending, s.pendingBytes = nil, 0
	}
	return &protocol.CommandReply{ID: s.id, OK: true, Lg: part}
}

// end ends the session now (cancel, lapse, shutdown): a last empty part says why.
func (s *logSession) end(reason string) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	reply := s.partLocked(nil, reason)
	s.mu.Unlock()
	s.send(*reply)
	s.onEnd(reason)
}

func (s *logSession) lapsed(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.ended && now.Sub(s.lastHeard) >= protocol.LogSessionLeaseMs*time.Millisecond
}

// logSessions are the agent's open sessions by request id.
type logSessions struct {
	mu       sync.Mutex
	sessions map[string]*logSession
	sweeping bool
}

// onLogCommand opens, credits or ends a session; the node never streams without a `logs` request.
func (a *Agent) onLogCommand(request protocol.CommandRequest) {
	a.logs.mu.Lock()
	if a.logs.sessions == nil {
		a.logs.sessions = map[string]*logSession{}
	}
	session := a.logs.sessions[request.ID]
	count := len(a.logs.sessions)
	a.logs.mu.Unlock()
	switch request.Cmd {
	case protocol.CmdCredit:
		if session == nil {
			// A session this node does not have (it restarted, or the lease lapsed): say it ended.
			a.sendCommandReply(protocol.CommandReply{ID: request.ID, OK: true, Lg: &protocol.LogPart{End: protocol.LogEndLapsed}})
			return
		}
		session.grant(*request.Cr)
		return
	case protocol.CmdCancel:
		if session != nil {
			session.end(protocol.LogEndCancelled)
		}
		return
	}
	if session != nil {
		return // a repeated open: the session runs already
	}
	source, ok := a.options.Runtime.(appLogs)
	if !ok {
		why := "this runtime keeps no app output"
		a.sendCommandReply(protocol.CommandReply{ID: request.ID, Err: protocol.CmdErrUnsupported, Why: &why})
		return
	}
	log := source.AppLog(request.App)
	if log == nil {
		why := "no app " + request.App + " on this node"
		a.sendCommandReply(protocol.CommandReply{ID: request.ID, Err: protocol.CmdErrUnknownApp, Why: &why})
		return
	}
	if count >= protocol.AgentMaxLogSessions {
		why := fmt.Sprintf("the node already serves %d log sessions", protocol.AgentMaxLogSessions)
		a.sendCommandReply(protocol.CommandReply{ID: request.ID, Err: protocol.CmdErrBusy, Why: &why})
		return
	}
	tail := 100
	if request.N != nil {
		tail = int(*request.N)
	}
	follow := request.F == nil || *request.F
	credit := int64(0)
	if request.Cr != nil {
		credit = min(*request.Cr, protocol.LogMaxCreditBytes)
	}
	opened := &logSession{
		id: request.ID, follow: follow, budget: *request.Bud, credit: credit, lastHeard: time.Now(),
		send: a.sendCommandReply,
	}
	opened.onEnd = func(reason string) {
		a.logs.mu.Lock()
		delete(a.logs.sessions, request.ID)
		a.logs.mu.Unlock()
		a.logger.Info("log session ended", "id", request.ID, "reason", reason)
	}
	a.logs.mu.Lock()
	a.logs.sessions[request.ID] = opened
	startSweep := !a.logs.sweeping
	a.logs.sweeping = true
	a.logs.mu.Unlock()
	if startSweep {
		a.wg.Add(1)
		go a.sweepLogSessions()
	}
	a.logger.Info("log session", "id", request.ID, "app", request.App)
	opened.start(log, tail)
}

// sweepLogSessions ends sessions whose lease lapsed, and all of them when the agent stops.
func (a *Agent) sweepLogSessions() {
	defer a.wg.Done()
	ticker := time.NewTicker(5 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-a.ctx.Done():
			for _, session := range a.openLogSessions() {
				session.end(protocol.LogEndShutdown)
			}
			return
		case now := <-ticker.C:
			for _, session := range a.openLogSessions() {
				if session.lapsed(now) {
					session.end(protocol.LogEndLapsed)
				}
			}
		}
	}
}

func (a *Agent) openLogSessions() []*logSession {
	a.logs.mu.Lock()
	defer a.logs.mu.Unlock()
	out := make([]*logSession, 0, len(a.logs.sessions))
	for _, session := range a.logs.sessions {
		out = append(out, session)
	}
	return out
}

// probeChunk is the probe id, a 0 byte, then filler that does not compress.
func probeChunk(id string) []byte {
	chunk := make([]byte, max(protocol.ProbeChunkBytes, len(id)+1))
	copy(chunk, id)
	for index := len(id) + 1; index < len(chunk); index++ {
		chunk[index] = byte((uint32(index) * 2654435761) >> 24)
	}
	return chunk
}

// runProbe measures throughput to the leaf (publish on `.sink`, then flush) or the hub (requests on
// `.prb`, ProbeWindow in flight, each answered by the gateway), within the bytes and time asked.
func (a *Agent) runProbe(request protocol.CommandRequest) protocol.CommandReply {
	nc := a.conn()
	if nc == nil || !a.connected.Load() {
		why := "not connected"
		return protocol.CommandReply{Err: protocol.CmdErrFailed, Why: &why}
	}
	limit := *request.By
	deadline := time.Now().Add(time.Duration(*request.Ms) * time.Millisecond)
	chunk := probeChunk(request.ID)
	started := time.Now()
	var mu sync.Mutex
	var sent int64
	var failure error
	take := func() bool {
		mu.Lock()
		defer mu.Unlock()
		if failure != nil || sent >= limit || time.Now().After(deadline) {
			return false
		}
		sent += int64(len(chunk))
		return true
	}
	if request.To == "leaf" {
		subject := a.addr().UpSubject(protocol.UpSink)
		for count := 1; take(); count++ {
			if err := nc.Publish(subject, chunk); err != nil {
				failure = err
				break
			}
			if count%4 == 0 {
				if err := nc.FlushTimeout(time.Until(deadline) + 2*time.Second); err != nil {
					failure = err
					break
				}
			}
		}
		if failure == nil {
			failure = nc.FlushTimeout(10 * time.Second)
		}
	} else {
		subject := a.addr().UpSubject(protocol.UpPrb)
		var wg sync.WaitGroup
		for range protocol.ProbeWindow {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for take() {
					if _, err := nc.Request(subject, chunk, time.Until(deadline)+2*time.Second); err != nil {
						mu.Lock()
						if failure == nil {
							failure = err
						}
						mu.Unlock()
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	if failure != nil {
		why := clipText("probe failed: "+failure.Error(), 256)
		return protocol.CommandReply{Err: protocol.CmdErrFailed, Why: &why}
	}
	via := clipText(nc.ConnectedUrlRedacted(), 256)
	ms := max(1, time.Since(started).Milliseconds())
	return protocol.CommandReply{OK: true, Prb: &protocol.ProbeResult{To: request.To, By: sent, Ms: ms, Via: &via}}
}
