package runtime

import (
	"log/slog"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/artifacts"
	"github.com/edgefleet/edgefleet/apps/agent/backoff"
	"github.com/edgefleet/edgefleet/apps/agent/metrics"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// Options of the process runtime.
type Options struct {
	// AppsDir holds each app's `<app>/` directory.
	AppsDir          string
	Backoff          RestartBackoff
	Fetch            artifacts.FetchOptions
	Refetch          backoff.Policy
	ProgressInterval time.Duration
	Logger           *slog.Logger
}

type removal struct {
	slot *Slot
	done chan struct{}
}

type usage struct {
	cpu time.Duration
	at  time.Time
}

// Runtime runs each desired app as a real process group, one Slot per app doing its version
// switches. The agent calls Put and Remove with absolute desired state (re-applying is harmless)
// and reports Instances whenever OnChange fires.
type Runtime struct {
	options Options

	mu           sync.Mutex
	apps         map[string]*Slot
	removing     map[string]*removal
	listeners    []func()
	chunkSource  artifacts.ChunkSource
	lastUsage    map[int]usage
	shuttingDown bool
}

// New creates a runtime.
func New(options Options) *Runtime {
	if options.Logger == nil {
		options.Logger = slog.New(slog.DiscardHandler)
	}
	if options.Backoff == (RestartBackoff{}) {
		options.Backoff = DefaultRestartBackoff
	}
	return &Runtime{options: options, apps: map[string]*Slot{}, removing: map[string]*removal{}, lastUsage: map[int]usage{}}
}

// UseChunkSource names where artifacts come from (the agent's connection).
func (r *Runtime) UseChunkSource(source artifacts.ChunkSource) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.chunkSource = source
}

// OnChange subscribes to state transitions.
func (r *Runtime) OnChange(listener func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.listeners = append(r.listeners, listener)
}

func (r *Runtime) emit() {
	r.mu.Lock()
	listeners := append([]func(){}, r.listeners...)
	r.mu.Unlock()
	for _, listener := range listeners {
		listener()
	}
}

// Put runs app at version (replacing another version, spec or artifact; a no-op if unchanged).
func (r *Runtime) Put(app, version string, spec protocol.RunSpec, art *protocol.ArtifactRef) {
	r.mu.Lock()
	if r.shuttingDown {
		r.mu.Unlock()
		return
	}
	slot := r.apps[app]
	if slot == nil {
		var after <-chan struct{}
		if pending := r.removing[app]; pending != nil {
			after = pending.done
		}
		slot = NewSlot(SlotOptions{
			App: app, AppDir: filepath.Join(r.options.AppsDir, SafeDirName(app)),
			Backoff: r.options.Backoff, Logger: r.options.Logger, OnChange: r.emit,
			ChunkSource: func() artifacts.ChunkSource {
				r.mu.Lock()
				defer r.mu.Unlock()
				return r.chunkSource
			},
			Fetch: r.options.Fetch, Refetch: r.options.Refetch,
			ProgressInterval: r.options.ProgressInterval, After: after,
		})
		r.apps[app] = slot
	}
	r.mu.Unlock()
	slot.Put(Release{Version: version, Spec: spec, Art: art})
}

// AppLog is the app's recent output; nil for an app this node does not have.
func (r *Runtime) AppLog(app string) *AppLog {
	r.mu.Lock()
	slot := r.apps[app]
	r.mu.Unlock()
	if slot == nil {
		return nil
	}
	return slot.log
}

// Operate runs an operator's app command (the agent sets the reply's id).
func (r *Runtime) Operate(app, command string) protocol.CommandReply {
	r.mu.Lock()
	slot := r.apps[app]
	r.mu.Unlock()
	if slot == nil {
		return failedReply(protocol.CmdErrUnknownApp, "no app "+app+" on this node")
	}
	return slot.Operate(command)
}

// Remove stops and forgets app (a no-op if unknown); it is reported until its process is gone.
func (r *Runtime) Remove(app string) {
	r.mu.Lock()
	slot := r.apps[app]
	if slot == nil {
		r.mu.Unlock()
		return
	}
	delete(r.apps, app)
	pending := &removal{slot: slot, done: make(chan struct{})}
	r.removing[app] = pending
	r.mu.Unlock()
	go func() {
		slot.Remove()
		r.mu.Lock()
		if r.removing[app] == pending {
			delete(r.removing, app)
		}
		r.mu.Unlock()
		close(pending.done)
		r.emit()
	}()
}

// Instances is a snapshot of every instance, in app-name order.
func (r *Runtime) Instances() []protocol.InstanceStatus {
	r.mu.Lock()
	slots := map[string]*Slot{}
	for app, pending := range r.removing {
		slots[app] = pending.slot
	}
	for app, slot := range r.apps {
		slots[app] = slot
	}
	r.mu.Unlock()
	instances := make([]protocol.InstanceStatus, 0, len(slots))
	for _, slot := range slots {
		instances = append(instances, slot.Status())
	}
	sort.Slice(instances, func(a, b int) bool { return instances[a].App < instances[b].App })
	return instances
}

// SampleUsage is the CPU (since the previous call) and RSS of each running app's main process.
func (r *Runtime) SampleUsage() []protocol.AppUsage {
	r.mu.Lock()
	slots := map[string]*Slot{}
	for app, slot := range r.apps {
		slots[app] = slot
	}
	previous := r.lastUsage
	r.mu.Unlock()
	names := make([]string, 0, len(slots))
	for app := range slots {
		names = append(names, app)
	}
	sort.Strings(names)
	seen := map[int]usage{}
	result := []protocol.AppUsage{}
	for _, app := range names {
		pid := slots[app].PID()
		if pid == 0 {
			continue
		}
		sample, err := metrics.SampleProcess(pid)
		if err != nil {
			continue
		}
		now := time.Now()
		seen[pid] = usage{cpu: sample.CPU, at: now}
		cpu := int64(0)
		if before, ok := previous[pid]; ok {
			cpu = metrics.CPUPerMille(before.cpu, sample.CPU, now.Sub(before.at))
		}
		result = append(result, protocol.AppUsage{App: app, CPU: cpu, Mem: sample.RSS})
	}
	r.mu.Lock()
	r.lastUsage = seen
	r.mu.Unlock()
	return result
}

// Shutdown stops every app (SIGTERM, then SIGKILL after its grace) and waits for all exits.
func (r *Runtime) Shutdown() {
	r.mu.Lock()
	r.shuttingDown = true
	var wait sync.WaitGroup
	for _, slot := range r.apps {
		wait.Add(1)
		go func() {
			defer wait.Done()
			slot.Shutdown()
		}()
	}
	var removals []chan struct{}
	for _, pending := range r.removing {
		removals = append(removals, pending.done)
	}
	r.mu.Unlock()
	wait.Wait()
	for _, done := range removals {
		<-done
	}
	r.emit()
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// SafeDirName keeps an app name (from the control plane) from escaping the apps directory.
func SafeDirName(app string) string {
	name := unsafeName.ReplaceAllString(app, "_")
	if len(name) > 0 && name[0] == '.' {
		trimmed := 0
		for trimmed < len(name) && name[trimmed] == '.' {
			trimmed++
		}
		name = "_" + name[trimmed:]
	}
	return name
}
