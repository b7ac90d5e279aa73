package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/edgefleet/edgefleet/apps/agent/artifacts"
	"github.com/edgefleet/edgefleet/apps/agent/backoff"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// Release is what the desired state names for one app: a version, how to run it, its artifact.
type Release struct {
	Version string                `json:"version"`
	Spec    protocol.RunSpec      `json:"spec"`
	Art     *protocol.ArtifactRef `json:"art,omitempty"`
}

// Same tells whether two releases are the same (a put of the same release does nothing).
func (r Release) Same(other Release) bool {
	return r.Version == other.Version && reflect.DeepEqual(r.Spec, other.Spec) && reflect.DeepEqual(r.Art, other.Art)
}

// slotFile is `<appDir>/slot.json`, the reference agent's format: what runs, what ran before, a
// version that failed, and whether the current one is still within its start window.
type slotFile struct {
	Current  *Release `json:"current,omitempty"`
	Previous *Release `json:"previous,omitempty"`
	Failed   *struct {
		Release Release `json:"release"`
		Why     string  `json:"why"`
	} `json:"failed,omitempty"`
	Trial bool `json:"trial,omitempty"`
}

// SlotOptions configure one app's slot.
type SlotOptions struct {
	App string
	// AppDir is `<appsDir>/<app>`: output log, slot.json, versions/<sha256>/, download/.
	AppDir      string
	Backoff     RestartBackoff
	Logger      *slog.Logger
	OnChange    func()
	ChunkSource func() artifacts.ChunkSource
	Fetch       artifacts.FetchOptions
	// Refetch spaces fetching again after a refusal that may pass (default 30 s doubling to 10 min).
	Refetch backoff.Policy
	// ProgressInterval bounds how often pulling progress reaches the status (default 2 s).
	ProgressInterval time.Duration
	// After is closed before the slot touches the disk (a removal of the same app cleaning up).
	After <-chan struct{}
}

const maxReason = 256

type running struct {
	release Release
	process *Process
}

type failure struct {
	release   Release
	why       string
	retryable bool
}

type pulling struct {
	release     Release
	done, total int64
	totalKnown  bool
}

type probation struct {
	cancel func()
	check  func()
}

// Slot is one app on the node and its version switches: fetch and verify the new version while
// the current one runs, stop the current, start the new, watch it through its start window, and
// go back to the previous version (kept on disk) when it fails there with revertOnFailure. Every
// change goes through one queue; slot.json survives agent restarts.
type Slot struct {
	options SlotOptions
	queue   serialQueue
	// log is the app's recent output across versions and restarts (live log sessions).
	log *AppLog

	mu          sync.Mutex
	desired     *Release
	current     *running
	previous    *Release
	failed      *failure
	pulling     *pulling
	generation  int
	fetchCancel context.CancelFunc
	refetch     *time.Timer
	refetches   int
	probation   *probation
	closed      bool
	onTrial     bool
	lastEmitted string
}

// NewSlot creates a slot and restores its saved state.
func NewSlot(options SlotOptions) *Slot {
	if options.Refetch.Base == 0 {
		options.Refetch = backoff.Policy{Base: 30 * time.Second, Max: 10 * time.Minute}
	}
	if options.ProgressInterval == 0 {
		options.ProgressInterval = 2 * time.Second
	}
	s := &Slot{options: options, log: NewAppLog(0)}
	s.queue.add(func() {
		if options.After != nil {
			<-options.After
		}
		s.restore()
	})
	return s
}

// Put converges on release (absolute: the same release again does nothing).
func (s *Slot) Put(release Release) {
	s.mu.Lock()
	if s.closed || s.desired != nil && s.desired.Same(release) {
		s.mu.Unlock()
		return
	}
	s.desired = &release
	s.generation++
	generation := s.generation
	// A pull of another version stops; its download file stays for a later resume.
	if s.fetchCancel != nil {
		s.fetchCancel()
	}
	if s.refetch != nil {
		s.refetch.Stop()
	}
	s.refetches = 0
	s.mu.Unlock()
	s.emit()
	s.enqueue(generation, false)
}

// Status is the instance status the agent reports.
func (s *Slot) Status() protocol.InstanceStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statusLocked()
}

func (s *Slot) statusLocked() protocol.InstanceStatus {
	var base *protocol.InstanceStatus
	if s.current != nil && s.current.process != nil {
		status := s.current.process.Status()
		base = &status
	}
	var ver string
	var rs int64
	if base != nil {
		ver, rs = base.Ver, base.Rs
	}
	switch {
	case s.pulling != nil:
		done := s.pulling.done
		status := protocol.InstanceStatus{App: s.options.App, Ver: ver, St: protocol.StatePulling, Rs: rs, Tgt: s.pulling.release.Version, Pb: &done}
		if s.pulling.totalKnown {
			total := s.pulling.total
			status.Pt = &total
		}
		return status
	case s.failed != nil:
		why := clip(s.failed.why)
		return protocol.InstanceStatus{App: s.options.App, Ver: ver, St: protocol.StateFailed, Why: &why, Rs: rs, Tgt: s.failed.release.Version}
	case base != nil:
		return *base
	}
	return protocol.InstanceStatus{App: s.options.App, St: protocol.StatePending}
}

// PID of the running version's process (0: none).
func (s *Slot) PID() int {
	s.mu.Lock()
	current := s.current
	s.mu.Unlock()
	if current == nil || current.process == nil {
		return 0
	}
	return current.process.PID()
}

// Shutdown stops the app, keeping its versions on disk (agent shutdown).
func (s *Slot) Shutdown() {
	s.close()
	s.queue.run(func() {
		if process := s.currentProcess(); process != nil {
			process.Stop()
		}
	})
}

// Remove stops the app for good and deletes its versions (removed from the node).
func (s *Slot) Remove() {
	s.close()
	s.queue.run(func() {
		if process := s.currentProcess(); process != nil {
			process.Stop()
		}
		_ = os.RemoveAll(filepath.Join(s.options.AppDir, "versions"))
		_ = os.RemoveAll(filepath.Join(s.options.AppDir, "download"))
		_ = os.Remove(s.slotPath())
	})
}

// Operate runs an operator's app command on the running version (restart, stop, start, health).
// Not through the switch queue: a restart must not wait behind a download.
func (s *Slot) Operate(command string) protocol.CommandReply {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	process := s.currentProcess()
	if closed || process == nil {
		return failedReply(protocol.CmdErrNotRunning, "app "+s.options.App+" has no started version on this node")
	}
	reply := protocol.CommandReply{OK: true}
	switch command {
	case protocol.CmdHealth:
		failure, checked := process.CheckHealthNow()
		if !checked {
			return failedReply(protocol.CmdErrNoHealthCheck, "app "+s.options.App+" has no health check")
		}
		reply.Hl = &protocol.HealthResult{OK: failure == ""}
		if failure != "" {
			why := clip(failure)
			reply.Hl.Why = &why
		}
	case protocol.CmdRestart:
		process.RestartNow()
	case protocol.CmdStop:
		process.Hold()
	case protocol.CmdStart:
		process.Resume()
	default:
		return failedReply(protocol.CmdErrUnsupported, "not an app command: "+command)
	}
	status := s.Status()
	reply.Inst = &status
	return reply
}

func failedReply(code, why string) protocol.CommandReply {
	return protocol.CommandReply{Err: code, Why: &why}
}

func (s *Slot) currentProcess() *Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == nil {
		return nil
	}
	return s.current.process
}

func (s *Slot) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.generation++
	if s.fetchCancel != nil {
		s.fetchCancel()
	}
	if s.refetch != nil {
		s.refetch.Stop()
	}
	if s.probation != nil {
		s.probation.cancel()
		s.probation = nil
	}
}

func (s *Slot) enqueue(generation int, refetch bool) {
	s.queue.add(func() { s.converge(generation, refetch) })
}

func (s *Slot) staleLocked(generation int) bool { return s.closed || generation != s.generation }

func (s *Slot) stale(generation int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.staleLocked(generation)
}

func (s *Slot) converge(generation int, refetch bool) {
	s.mu.Lock()
	if s.staleLocked(generation) || s.desired == nil {
		s.mu.Unlock()
		return
	}
	target := *s.desired
	if s.current != nil && s.current.release.Same(target) {
		// Already there (or back there: a rollback to the running version ends a failed switch).
		s.failed = nil
		s.mu.Unlock()
		s.ensureStarted(generation)
		s.persist()
		s.emit()
		return
	}
	s.mu.Unlock()
	// The current version keeps running while the new one downloads.
	s.ensureStarted(generation)
	s.mu.Lock()
	if s.failed != nil && s.failed.release.Same(target) && !(refetch && s.failed.retryable) {
		// A version that failed here stays failed until the desired state changes.
		s.mu.Unlock()
		s.emit()
		return
	}
	s.failed = nil
	s.mu.Unlock()
	workDir := ""
	if target.Art != nil {
		dir, err := s.obtain(target)
		s.mu.Lock()
		s.pulling, s.fetchCancel = nil, nil
		var typed *artifacts.Error
		isTyped := errors.As(err, &typed)
		if err != nil && (s.staleLocked(generation) || isTyped && typed.Code == artifacts.CodeAborted) {
			s.mu.Unlock()
			s.emit()
			return
		}
		if err != nil {
			retryable := !isTyped || typed.Retryable()
			why := err.Error()
			if s.current != nil {
				why += "; still running " + s.current.release.Version
			}
			s.failed = &failure{release: target, why: why, retryable: retryable}
			s.mu.Unlock()
			s.options.Logger.Warn("new version refused", "app", s.options.App, "version", target.Version, "reason", why)
			s.persist()
			s.emit()
			if retryable {
				s.scheduleRefetch(generation)
			}
			return
		}
		stale := s.staleLocked(generation)
		s.mu.Unlock()
		if stale {
			return
		}
		workDir = dir
	}
	s.switchTo(target, workDir, generation)
}

// switchTo stops the current version, starts target, and puts it on probation.
func (s *Slot) switchTo(target Release, workDir string, generation int) {
	s.mu.Lock()
	old := s.current
	if s.probation != nil {
		s.probation.cancel()
		s.probation = nil
	}
	next := s.newProcess(target, workDir)
	s.current = &running{release: target, process: next}
	if old != nil {
		previous := old.release
		s.previous = &previous
	}
	s.mu.Unlock()
	s.emit()
	// Two versions never run at once: the new one starts once the old one has exited.
	if old != nil && old.process != nil {
		old.process.Stop()
	}
	_ = os.MkdirAll(s.options.AppDir, 0o755)
	s.mu.Lock()
	s.onTrial = true
	s.mu.Unlock()
	s.persist()
	s.mu.Lock()
	if s.closed || s.current == nil || s.current.process != next {
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	next.Start()
	var fallback *Release
	if old != nil {
		fallback = &old.release
	}
	s.watchStart(next, target, fallback, generation)
}

func (s *Slot) watchStart(process *Process, target Release, fallback *Release, generation int) {
	window := target.Spec.StartWindow()
	var once sync.Once
	var timer *time.Timer
	settle := func(failure string) {
		once.Do(func() {
			timer.Stop()
			s.mu.Lock()
			s.probation = nil
			s.mu.Unlock()
			s.queue.add(func() { s.settleStart(process, target, fallback, failure, window, generation) })
		})
	}
	timer = time.AfterFunc(window, func() {
		status := process.Status()
		if status.St == protocol.StateRunning {
			settle("")
			return
		}
		detail := status.St
		if status.Why != nil {
			detail += ": " + *status.Why
		}
		settle(fmt.Sprintf("not healthy after %s s (%s)", formatSeconds(window), detail))
	})
	s.mu.Lock()
	s.probation = &probation{
		cancel: func() { once.Do(func() { timer.Stop() }) },
		check: func() {
			status := process.Status()
			if status.St == protocol.StateFailed {
				why := "failed"
				if status.Why != nil {
					why = *status.Why
				}
				settle(why)
			}
		},
	}
	s.mu.Unlock()
	// The process may have failed before the probation was in place.
	s.checkProbation()
}

func (s *Slot) checkProbation() {
	s.mu.Lock()
	current := s.probation
	s.mu.Unlock()
	if current != nil {
		current.check()
	}
}

func (s *Slot) settleStart(process *Process, target Release, fallback *Release, problem string, window time.Duration, generation int) {
	s.mu.Lock()
	if s.current == nil || s.current.process != process {
		s.mu.Unlock()
		return
	}
	s.onTrial = false
	stale := s.staleLocked(generation)
	s.mu.Unlock()
	if problem == "" {
		s.options.Logger.Info("new version running", "app", s.options.App, "version", target.Version)
		s.collectGarbage()
		s.persist()
		return
	}
	why := fmt.Sprintf("%s failed within its %s s start window: %s", target.Version, formatSeconds(window), problem)
	if !target.Spec.Reverts() || fallback == nil || stale {
		// It stays, under its restart policy; its own status says how it fails.
		s.options.Logger.Warn("new version failing, not reverting", "app", s.options.App, "reason", why)
		s.persist()
		return
	}
	s.options.Logger.Warn("new version failed, reverting", "app", s.options.App, "version", target.Version, "to", fallback.Version, "reason", why)
	process.Stop()
	s.mu.Lock()
	if s.current == nil || s.current.process != process {
		s.mu.Unlock()
		return
	}
	restored := s.newProcess(*fallback, s.workDirOf(*fallback))
	s.current = &running{release: *fallback, process: restored}
	s.previous = nil
	s.failed = &failure{release: target, why: why + "; reverted to " + fallback.Version}
	s.mu.Unlock()
	restored.Start()
	s.persist()
	s.emit()
}

// obtain fetches, verifies and unpacks the artifact into versions/<sha256> unless it is there.
func (s *Slot) obtain(target Release) (string, error) {
	dir := s.workDirOf(target)
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	var source artifacts.ChunkSource
	if s.options.ChunkSource != nil {
		source = s.options.ChunkSource()
	}
	if source == nil {
		return "", &artifacts.Error{Code: artifacts.CodeNoSource, Message: "no artifact source: the agent is not attached"}
	}
	obj := target.Art.Object()
	downloads := filepath.Join(s.options.AppDir, "download")
	if err := os.MkdirAll(downloads, 0o755); err != nil {
		return "", fmt.Errorf("create download dir: %w", err)
	}
	partPath := filepath.Join(downloads, obj+".part")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.mu.Lock()
	s.fetchCancel = cancel
	progress := &pulling{release: target}
	s.pulling = progress
	s.mu.Unlock()
	s.emit()
	lastEmit := time.Now()
	options := s.options.Fetch
	options.Source, options.Obj, options.SHA256, options.PartPath = source, obj, target.Art.Sha, partPath
	options.OnProgress = func(done, total int64) {
		s.mu.Lock()
		progress.done, progress.total, progress.totalKnown = done, total, true
		s.mu.Unlock()
		if time.Since(lastEmit) >= s.options.ProgressInterval || done == total {
			lastEmit = time.Now()
			s.emit()
		}
	}
	if _, err := artifacts.Fetch(ctx, options); err != nil {
		return "", err
	}
	if _, err := artifacts.Install(partPath, dir, artifacts.MaxUnpackedBytes); err != nil {
		return "", err
	}
	_ = os.Remove(partPath)
	return dir, nil
}

func (s *Slot) scheduleRefetch(generation int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delay := s.options.Refetch.Delay(s.refetches)
	s.refetches++
	if s.refetch != nil {
		s.refetch.Stop()
	}
	s.refetch = time.AfterFunc(delay, func() {
		if !s.stale(generation) {
			s.enqueue(generation, true)
		}
	})
}

// ensureStarted starts the current version if it does not run yet (after an agent restart).
func (s *Slot) ensureStarted(generation int) {
	s.mu.Lock()
	current := s.current
	if current == nil || current.process != nil || s.closed {
		s.mu.Unlock()
		return
	}
	process := s.newProcess(current.release, s.workDirOf(current.release))
	current.process = process
	trial := s.onTrial && s.previous != nil
	if !trial {
		s.onTrial = false
	}
	previous := s.previous
	s.mu.Unlock()
	process.Start()
	// Restarted within its start window: watched again, so a failure still reverts.
	if trial {
		s.watchStart(process, current.release, previous, generation)
	}
}

func (s *Slot) newProcess(release Release, workDir string) *Process {
	return NewProcess(ProcessOptions{
		App: s.options.App, Version: release.Version, Spec: release.Spec,
		AppDir: s.options.AppDir, WorkDir: workDir, Backoff: s.options.Backoff, Logger: s.options.Logger,
		Output: s.log,
		OnChange: func() {
			s.checkProbation()
			s.emit()
		},
	})
}

// workDirOf is where a release's artifact is unpacked; "" when it has none (runs in the app dir).
func (s *Slot) workDirOf(release Release) string {
	if release.Art == nil {
		return ""
	}
	return filepath.Join(s.options.AppDir, "versions", release.Art.Sha)
}

// collectGarbage keeps the running, the previous and a failed version's files.
func (s *Slot) collectGarbage() {
	s.mu.Lock()
	keep := map[string]bool{}
	for _, release := range []*Release{s.currentRelease(), s.previous, s.failedRelease()} {
		if release != nil && release.Art != nil {
			keep[release.Art.Sha] = true
		}
	}
	s.mu.Unlock()
	versions := filepath.Join(s.options.AppDir, "versions")
	entries, _ := os.ReadDir(versions)
	for _, entry := range entries {
		if !keep[entry.Name()] {
			_ = os.RemoveAll(filepath.Join(versions, entry.Name()))
		}
	}
}

func (s *Slot) currentRelease() *Release {
	if s.current == nil {
		return nil
	}
	return &s.current.release
}

func (s *Slot) failedRelease() *Release {
	if s.failed == nil {
		return nil
	}
	return &s.failed.release
}

func (s *Slot) slotPath() string { return filepath.Join(s.options.AppDir, "slot.json") }

// restore reads slot.json (a missing or corrupt one: start from the desired state alone) and ends
// a process a crashed agent left running.
func (s *Slot) restore() {
	if killed, _ := KillLeftover(s.options.AppDir); killed {
		s.options.Logger.Warn("ended an app process left by a previous agent run", "app", s.options.App)
	}
	data, err := os.ReadFile(s.slotPath())
	if err != nil {
		return
	}
	var saved slotFile
	if err := json.Unmarshal(data, &saved); err != nil {
		s.options.Logger.Warn("slot state unreadable, starting from the desired state", "app", s.options.App, "error", err.Error())
		return
	}
	present := func(release *Release) bool {
		if release == nil || len(release.Spec.Command) == 0 {
			return false
		}
		dir := s.workDirOf(*release)
		if dir == "" {
			return true
		}
		_, err := os.Stat(dir)
		return err == nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if present(saved.Current) {
		s.current = &running{release: *saved.Current}
	}
	if present(saved.Previous) {
		s.previous = saved.Previous
	}
	if saved.Failed != nil {
		s.failed = &failure{release: saved.Failed.Release, why: saved.Failed.Why}
	}
	s.onTrial = saved.Trial && s.current != nil
}

func (s *Slot) persist() {
	s.mu.Lock()
	saved := slotFile{Current: s.currentRelease(), Previous: s.previous, Trial: s.onTrial}
	// Only failures asking again would not change: a refused download is retried after a restart.
	if s.failed != nil && !s.failed.retryable {
		saved.Failed = &struct {
			Release Release `json:"release"`
			Why     string  `json:"why"`
		}{s.failed.release, s.failed.why}
	}
	data, err := json.Marshal(saved)
	s.mu.Unlock()
	if err != nil {
		return
	}
	if err := os.MkdirAll(s.options.AppDir, 0o755); err != nil {
		s.options.Logger.Error("cannot save slot state", "app", s.options.App, "error", err.Error())
		return
	}
	temporary := s.slotPath() + ".tmp"
	err = os.WriteFile(temporary, data, 0o644)
	if err == nil {
		err = os.Rename(temporary, s.slotPath())
	}
	if err != nil {
		s.options.Logger.Error("cannot save slot state", "app", s.options.App, "error", err.Error())
	}
}

// emit tells the runtime, once per actual change of the reported status.
func (s *Slot) emit() {
	s.mu.Lock()
	key := fmt.Sprintf("%+v", statusKey(s.statusLocked()))
	changed := key != s.lastEmitted
	s.lastEmitted = key
	s.mu.Unlock()
	if changed && s.options.OnChange != nil {
		s.options.OnChange()
	}
}

func statusKey(status protocol.InstanceStatus) []any {
	deref := func(p *int64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	why := ""
	if status.Why != nil {
		why = "+" + *status.Why
	}
	return []any{status.App, status.Ver, status.St, why, status.Rs, status.Tgt, deref(status.Pb), deref(status.Pt)}
}

// clip keeps a reason within the protocol's 256 characters (UTF-16 units, as JavaScript counts).
func clip(text string) string {
	length := 0
	for i, r := range text {
		length += utf16.RuneLen(r)
		if length > maxReason-1 {
			if jsLength(text[i:])+length-utf16.RuneLen(r) <= maxReason {
				return text
			}
			return text[:i] + "…"
		}
	}
	return text
}

func jsLength(text string) int {
	n := 0
	for _, r := range text {
		n += utf16.RuneLen(r)
	}
	return n
}

func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}
