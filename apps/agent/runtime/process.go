// Package runtime runs the desired apps as real processes: start, health checks, restart
// policies, stop with grace then SIGKILL, no orphans, and version switches with artifacts.
package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/edgefleet/edgefleet/apps/agent/metrics"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// RestartBackoff spaces restarts: MinDelay doubling per failure in a row up to MaxDelay; a process
// that ran StableAfter before failing starts the doubling over.
type RestartBackoff struct {
	MinDelay, MaxDelay, StableAfter time.Duration
}

// DefaultRestartBackoff is 1 s doubling to 60 s, reset after 60 s of running.
var DefaultRestartBackoff = RestartBackoff{MinDelay: time.Second, MaxDelay: time.Minute, StableAfter: time.Minute}

const outputLogRotateBytes = 5 * 1024 * 1024

// ProcessOptions describe one app version as a process.
type ProcessOptions struct {
	App, Version string
	Spec         protocol.RunSpec
	// AppDir holds the output log, and is the working directory unless WorkDir is given.
	AppDir string
	// WorkDir is the unpacked artifact of this version (also EDGEFLEET_ARTIFACT_DIR).
	WorkDir  string
	Backoff  RestartBackoff
	Logger   *slog.Logger
	OnChange func()
	// Output, when set, also gets the app's stdout and stderr (live log sessions read it); the
	// output then goes through a pipe the agent copies, instead of straight to the file.
	Output *AppLog
}

// Process is one app version as a real process group.
type Process struct {
	options ProcessOptions

	mu             sync.Mutex
	state, why     string
	restarts       int64
	started        bool
	cmd            *exec.Cmd
	generation     int
	exited         chan struct{}
	startedAt      time.Time
	failuresInARow int
	restartTimer   *time.Timer
	healthCancel   context.CancelFunc
	killReason     string
	stopping       bool
	stopped        chan struct{}
	// held: an operator stopped the process (stop, or the first half of restart): no automatic restart.
	held bool
}

// operatorStopped is the reason a held process reports.
const operatorStopped = "stopped by an operator"

// NewProcess prepares a process; Start runs it.
func NewProcess(options ProcessOptions) *Process {
	if options.Logger == nil {
		options.Logger = slog.New(slog.DiscardHandler)
	}
	if options.OnChange == nil {
		options.OnChange = func() {}
	}
	return &Process{options: options, state: protocol.StatePending}
}

// Status is the instance status of this version's process.
func (p *Process) Status() protocol.InstanceStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	status := protocol.InstanceStatus{App: p.options.App, St: p.state, Rs: p.restarts}
	if p.started {
		status.Ver = p.options.Version
	}
	if p.why != "" {
		why := p.why
		status.Why = &why
	}
	return status
}

// PID of the running process, 0 when none runs.
func (p *Process) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// setState changes the state under p.mu; it reports whether OnChange must be called.
func (p *Process) setState(state, why string) bool {
	if p.state == state && p.why == why {
		return false
	}
	p.state, p.why = state, why
	return true
}

func (p *Process) changed(yes bool) {
	if yes {
		p.options.OnChange()
	}
}

// Start runs the process in its own process group (so stop and cleanup reach everything it spawns).
func (p *Process) Start() {
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		return
	}
	changed := p.setState(protocol.StateStarting, "")
	spec := p.options.Spec
	cmd := exec.Command(spec.Command[0], spec.Command[1:]...)
	cmd.Dir = p.workDir()
	cmd.Env = p.environment()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	output, err := openOutputLog(p.options.AppDir)
	var keepOpen *os.File
	if err == nil {
		if ring := p.options.Output; ring != nil {
			tee := io.MultiWriter(&bestEffortWriter{w: output}, ring)
			cmd.Stdout, cmd.Stderr = tee, tee
			// Children the app left behind may hold the pipe: Wait does not wait for them.
			cmd.WaitDelay = 2 * time.Second
			keepOpen = output
		} else {
			cmd.Stdout, cmd.Stderr = output, output
		}
		err = cmd.Start()
		if keepOpen == nil || err != nil {
			output.Close()
			keepOpen = nil
		}
	}
	if err != nil {
		p.mu.Unlock()
		p.changed(changed)
		p.onExit(-1, "cannot start: "+err.Error())
		return
	}
	p.generation++
	generation := p.generation
	p.cmd = cmd
	p.started = true
	p.startedAt = time.Now()
	exited := make(chan struct{})
	p.exited = exited
	writePIDFile(p.options.AppDir, cmd.Process.Pid)
	if spec.Health != nil {
		ctx, cancel := context.WithCancel(context.Background())
		p.healthCancel = cancel
		go p.watchHealth(ctx, generation, cmd.Process.Pid)
	} else {
		changed = p.setState(protocol.StateRunning, "") || changed
	}
	p.mu.Unlock()
	p.changed(changed)
	p.options.Logger.Info("app process started", "app", p.options.App, "pid", cmd.Process.Pid)
	go func() {
		err := cmd.Wait()
		if keepOpen != nil {
			keepOpen.Close()
		}
		close(exited)
		p.onExit(generation, describeExit(cmd, err))
	}()
}

// Stop ends the process for good: SIGTERM to the group, SIGKILL after the grace period. It
// returns once the process exited.
func (p *Process) Stop() {
	p.mu.Lock()
	if p.stopping {
		stopped := p.stopped
		p.mu.Unlock()
		<-stopped
		return
	}
	p.stopping = true
	p.stopped = make(chan struct{})
	defer close(p.stopped)
	if p.restartTimer != nil {
		p.restartTimer.Stop()
	}
	if p.healthCancel != nil {
		p.healthCancel()
	}
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		pid := cmd.Process.Pid
		signalGroup(pid, syscall.SIGTERM)
		kill := time.AfterFunc(p.options.Spec.StopGrace(), func() { signalGroup(pid, syscall.SIGKILL) })
		<-exited
		kill.Stop()
		// Whatever the app spawned goes with it: no orphans.
		signalGroup(pid, syscall.SIGKILL)
	}
	p.mu.Lock()
	changed := p.setState(protocol.StateStopped, "")
	p.mu.Unlock()
	p.changed(changed)
}

// RestartNow is an operator restart: stop the process (grace, then SIGKILL) and start it again;
// it counts as a restart.
func (p *Process) RestartNow() {
	if !p.holdProcess() {
		return
	}
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		return
	}
	p.held = false
	p.restarts++
	p.failuresInARow = 0
	p.mu.Unlock()
	p.Start()
}

// Hold is an operator stop: the process ends and stays stopped until Resume (the app stays desired).
func (p *Process) Hold() {
	if !p.holdProcess() {
		return
	}
	p.mu.Lock()
	changed := p.setState(protocol.StateStopped, operatorStopped)
	p.mu.Unlock()
	p.changed(changed)
}

// Resume is an operator start: a held or failed process starts at once; a live one is left alone.
func (p *Process) Resume() {
	p.mu.Lock()
	if p.stopping || p.cmd != nil {
		p.mu.Unlock()
		return
	}
	p.held = false
	if p.restartTimer != nil {
		p.restartTimer.Stop()
	}
	p.mu.Unlock()
	p.Start()
}

// CheckHealthNow runs the health check once: "" when healthy, else why not; false without a check.
func (p *Process) CheckHealthNow() (string, bool) {
	if p.options.Spec.Health == nil {
		return "", false
	}
	return p.checkHealth(context.Background()), true
}

// holdProcess ends the running process (if any) without a restart; false once the process is stopping for good.
func (p *Process) holdProcess() bool {
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		return false
	}
	p.held = true
	if p.restartTimer != nil {
		p.restartTimer.Stop()
	}
	if p.healthCancel != nil {
		p.healthCancel()
	}
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		pid := cmd.Process.Pid
		signalGroup(pid, syscall.SIGTERM)
		kill := time.AfterFunc(p.options.Spec.StopGrace(), func() { signalGroup(pid, syscall.SIGKILL) })
		<-exited
		kill.Stop()
		signalGroup(pid, syscall.SIGKILL)
		p.mu.Lock()
		if p.cmd == cmd {
			removePIDFile(p.options.AppDir)
			p.cmd = nil
		}
		p.mu.Unlock()
	}
	return true
}

func (p *Process) onExit(generation int, exitReason string) {
	p.mu.Lock()
	if generation >= 0 {
		if generation != p.generation || p.cmd == nil {
			p.mu.Unlock()
			return
		}
		// Leave nothing of the group behind: what the app spawned would otherwise be orphans.
		signalGroup(p.cmd.Process.Pid, syscall.SIGKILL)
		removePIDFile(p.options.AppDir)
		p.cmd = nil
	}
	if p.healthCancel != nil {
		p.healthCancel()
		p.healthCancel = nil
	}
	if p.stopping {
		p.mu.Unlock()
		return
	}
	if p.held {
		changed := p.setState(protocol.StateStopped, operatorStopped)
		p.mu.Unlock()
		p.changed(changed)
		return
	}
	reason := exitReason
	if p.killReason != "" {
		reason = p.killReason
	}
	clean := p.killReason == "" && exitReason == "exited with code 0"
	p.killReason = ""
	state := protocol.StateFailed
	if clean {
		state = protocol.StateStopped
	}
	changed := p.setState(state, reason)
	policy := p.options.Spec.RestartPolicy()
	if policy == "never" || policy == "on-failure" && clean {
		p.mu.Unlock()
		p.options.Logger.Warn("app process ended", "app", p.options.App, "reason", reason)
		p.changed(changed)
		return
	}
	backoff := p.options.Backoff
	if !p.startedAt.IsZero() && time.Since(p.startedAt) >= backoff.StableAfter {
		p.failuresInARow = 0
	}
	delay := min(backoff.MaxDelay, backoff.MinDelay<<min(p.failuresInARow, 20))
	p.failuresInARow++
	p.restartTimer = time.AfterFunc(delay, func() {
		p.mu.Lock()
		if p.stopping {
			p.mu.Unlock()
			return
		}
		p.restarts++
		p.mu.Unlock()
		p.Start()
	})
	p.mu.Unlock()
	p.options.Logger.Warn("app process ended", "app", p.options.App, "reason", reason, "restartIn", delay.String())
	p.changed(changed)
}

// watchHealth checks soon after start, then every interval; failureThreshold failures in a row
// kill the process (its restart policy then applies).
func (p *Process) watchHealth(ctx context.Context, generation, pid int) {
	health := p.options.Spec.Health
	failures := 0
	delay := min(time.Second, health.Interval())
	for {
		if !sleep(ctx, delay) {
			return
		}
		delay = health.Interval()
		failure := p.checkHealth(ctx)
		p.mu.Lock()
		if ctx.Err() != nil || generation != p.generation || p.stopping {
			p.mu.Unlock()
			return
		}
		if failure == "" {
			failures = 0
			changed := false
			if p.state == protocol.StateStarting {
				changed = p.setState(protocol.StateRunning, "")
			}
			p.mu.Unlock()
			p.changed(changed)
			continue
		}
		failures++
		if failures >= health.Threshold() {
			p.killReason = fmt.Sprintf("health check failed %d times: %s", health.Threshold(), failure)
			signalGroup(pid, syscall.SIGKILL)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
}

// checkHealth returns "" when healthy, else why not.
func (p *Process) checkHealth(ctx context.Context) string {
	health := p.options.Spec.Health
	ctx, cancel := context.WithTimeout(ctx, health.Timeout())
	defer cancel()
	if len(health.Exec) > 0 {
		cmd := exec.CommandContext(ctx, health.Exec[0], health.Exec[1:]...)
		cmd.Dir = p.workDir()
		cmd.Env = p.environment()
		cmd.WaitDelay = time.Second
		if err := cmd.Run(); err != nil {
			return fmt.Sprintf("exec %s: %s", health.Exec[0], strings.SplitN(err.Error(), "\n", 2)[0])
		}
		return ""
	}
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, health.HTTP, nil)
	if err != nil {
		return fmt.Sprintf("GET %s: %v", health.HTTP, err)
	}
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		return fmt.Sprintf("GET %s: %v", health.HTTP, err)
	}
	response.Body.Close()
	if response.StatusCode >= 400 {
		return fmt.Sprintf("GET %s: HTTP %d", health.HTTP, response.StatusCode)
	}
	return ""
}

func (p *Process) workDir() string {
	switch {
	case p.options.Spec.Cwd != "":
		return p.options.Spec.Cwd
	case p.options.WorkDir != "":
		return p.options.WorkDir
	}
	return p.options.AppDir
}

// environment is small and predictable: not the agent's (which may hold its own settings).
func (p *Process) environment() []string {
	var env []string
	for _, name := range []string{"PATH", "HOME", "LANG", "TZ"} {
		if value, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+value)
		}
	}
	for _, kv := range p.options.Spec.Env {
		env = append(env, kv.Key+"="+kv.Value)
	}
	env = append(env, "EDGEFLEET_APP="+p.options.App, "EDGEFLEET_APP_VERSION="+p.options.Version)
	if p.options.WorkDir != "" {
		env = append(env, "EDGEFLEET_ARTIFACT_DIR="+p.options.WorkDir)
	}
	return env
}

func signalGroup(pid int, signal syscall.Signal) {
	if pid > 0 {
		_ = syscall.Kill(-pid, signal) // ESRCH: the group is gone already
	}
}

func describeExit(cmd *exec.Cmd, err error) string {
	state := cmd.ProcessState
	if state == nil {
		return fmt.Sprintf("exited: %v", err)
	}
	if status, ok := state.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		return "killed by " + unix.SignalName(status.Signal())
	}
	return fmt.Sprintf("exited with code %d", state.ExitCode())
}

// bestEffortWriter stops writing after its first error (a full disk) and keeps answering success:
// the app must not stall or die because its output log cannot be written.
type bestEffortWriter struct {
	w      io.Writer
	failed bool
}

func (b *bestEffortWriter) Write(data []byte) (int, error) {
	if !b.failed {
		if _, err := b.w.Write(data); err != nil {
			b.failed = true
		}
	}
	return len(data), nil
}

func openOutputLog(appDir string) (*os.File, error) {
	if err := os.MkdirAll(appDir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(appDir, "output.log")
	if info, err := os.Stat(path); err == nil && info.Size() > outputLogRotateBytes {
		_ = os.Rename(path, path+".1")
	}
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}

// The pid file names the running process (pid and start time) so that an agent restarted after
// a crash can end what its predecessor left running, and never a process that reused the pid.
const pidFile = "process.pid"

func writePIDFile(appDir string, pid int) {
	sample, err := metrics.SampleProcess(pid)
	if err != nil {
		return
	}
	_ = os.WriteFile(filepath.Join(appDir, pidFile), []byte(fmt.Sprintf("%d %d\n", pid, sample.StartTicks)), 0o644)
}

func removePIDFile(appDir string) { _ = os.Remove(filepath.Join(appDir, pidFile)) }

// KillLeftover ends the process group a previous agent run left in appDir, if it still runs.
func KillLeftover(appDir string) (bool, error) {
	text, err := os.ReadFile(filepath.Join(appDir, pidFile))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer removePIDFile(appDir)
	fields := strings.Fields(string(text))
	if len(fields) != 2 {
		return false, nil
	}
	pid, err1 := strconv.Atoi(fields[0])
	start, err2 := strconv.ParseInt(fields[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 1 {
		return false, nil
	}
	sample, err := metrics.SampleProcess(pid)
	if err != nil || sample.StartTicks != start {
		return false, nil
	}
	signalGroup(pid, syscall.SIGKILL)
	return true, nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
