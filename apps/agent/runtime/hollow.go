package runtime

import (
	"math/rand/v2"
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/artifacts"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// simulatedArtifactBytes is the size a simulated pull reports.
const simulatedArtifactBytes = 1 << 20

type hollowInstance struct {
	release Release
	state   string
	running string
	pulled  int64
	pulling bool
	timer   *time.Timer
	// restarts by operators (the only restarts a hollow app has); why: an operator's stop.
	restarts int64
	why      string
	// log is made at the first log session (thousands of hollow nodes keep no rings unasked).
	log *AppLog
}

// Hollow pretends to run apps: state transitions on timers (pending → [pulling →] starting →
// running), no processes, pulls simulated. For load tests with many agents in one process,
// speaking the real protocol (hollow.ts of the reference agent).
type Hollow struct {
	mu        sync.Mutex
	apps      map[string]*hollowInstance
	listeners []func()
	step      [2]time.Duration
}

// NewHollow returns a hollow runtime whose transitions take 20–200 ms each.
func NewHollow() *Hollow {
	return &Hollow{apps: map[string]*hollowInstance{}, step: [2]time.Duration{20 * time.Millisecond, 200 * time.Millisecond}}
}

// UseChunkSource is ignored: pulls are simulated.
func (h *Hollow) UseChunkSource(artifacts.ChunkSource) {}

// OnChange subscribes to transitions.
func (h *Hollow) OnChange(listener func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.listeners = append(h.listeners, listener)
}

func (h *Hollow) emit() {
	h.mu.Lock()
	listeners := append([]func(){}, h.listeners...)
	h.mu.Unlock()
	for _, listener := range listeners {
		listener()
	}
}

// Put starts the simulated switch to a release.
func (h *Hollow) Put(app, version string, spec protocol.RunSpec, art *protocol.ArtifactRef) {
	release := Release{Version: version, Spec: spec, Art: art}
	h.mu.Lock()
	current := h.apps[app]
	if current != nil && current.release.Version == version && reflect.DeepEqual(current.release.Spec, spec) && reflect.DeepEqual(current.release.Art, art) {
		h.mu.Unlock()
		return
	}
	instance := &hollowInstance{release: release, state: protocol.StatePending}
	if current != nil {
		current.timer.Stop()
		instance.running = current.running
		if current.state == protocol.StateRunning {
			instance.running = current.release.Version
		}
	}
	h.apps[app] = instance
	h.advanceLocked(app, instance, func() {
		if art != nil {
			instance.pulling, instance.pulled = true, simulatedArtifactBytes/2
			h.advanceLocked(app, instance, func() {
				instance.pulled = simulatedArtifactBytes
				h.advanceLocked(app, instance, func() { h.startLocked(app, instance) })
			})
			return
		}
		h.startLocked(app, instance)
	})
	h.mu.Unlock()
	h.emit()
}

func (h *Hollow) startLocked(app string, instance *hollowInstance) {
	instance.pulling = false
	instance.state = protocol.StateStarting
	h.advanceLocked(app, instance, func() {
		instance.state = protocol.StateRunning
		instance.running = instance.release.Version
	})
}

// advanceLocked (h.mu held) runs change under the lock after a random step, if the instance is
// still the app's; change may schedule the next step.
func (h *Hollow) advanceLocked(app string, instance *hollowInstance, change func()) {
	delay := h.step[0] + time.Duration(rand.Int64N(int64(h.step[1]-h.step[0])))
	instance.timer = time.AfterFunc(delay, func() {
		h.mu.Lock()
		current := h.apps[app] == instance
		if current {
			change()
		}
		h.mu.Unlock()
		if current {
			h.emit()
		}
	})
}

// Remove forgets app.
func (h *Hollow) Remove(app string) {
	h.mu.Lock()
	instance := h.apps[app]
	if instance != nil {
		instance.timer.Stop()
		delete(h.apps, app)
	}
	h.mu.Unlock()
	if instance != nil {
		h.emit()
	}
}

// Instances is the snapshot, in app-name order.
func (h *Hollow) Instances() []protocol.InstanceStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]protocol.InstanceStatus, 0, len(h.apps))
	for app, instance := range h.apps {
		status := protocol.InstanceStatus{App: app, St: instance.state, Ver: instance.running, Rs: instance.restarts}
		if instance.why != "" {
			why := instance.why
			status.Why = &why
		}
		if instance.pulling {
			pulled, total := instance.pulled, int64(simulatedArtifactBytes)
			status.St, status.Tgt, status.Pb, status.Pt = protocol.StatePulling, instance.release.Version, &pulled, &total
		} else if instance.state != protocol.StateRunning && instance.running != "" {
			status.Tgt = instance.release.Version
		}
		out = append(out, status)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].App < out[b].App })
	return out
}

// AppLog is a hollow app's "output": a line per operator action since the first session asked.
func (h *Hollow) AppLog(app string) *AppLog {
	h.mu.Lock()
	defer h.mu.Unlock()
	instance := h.apps[app]
	if instance == nil {
		return nil
	}
	if instance.log == nil {
		instance.log = NewAppLog(16 * 1024)
		instance.log.Append("hollow: " + app + " " + instance.release.Version + " is " + instance.state)
	}
	return instance.log
}

// Operate answers like a real runtime, without processes: restart counts, stop holds, health is healthy.
func (h *Hollow) Operate(app, command string) protocol.CommandReply {
	h.mu.Lock()
	instance := h.apps[app]
	if instance == nil {
		h.mu.Unlock()
		return failedReply(protocol.CmdErrUnknownApp, "no app "+app+" on this node")
	}
	if instance.pulling || instance.state != protocol.StateRunning && instance.state != protocol.StateStopped {
		state := instance.state
		h.mu.Unlock()
		return failedReply(protocol.CmdErrNotRunning, "app "+app+" is "+state)
	}
	reply := protocol.CommandReply{OK: true}
	switch command {
	case protocol.CmdHealth:
		reply.Hl = &protocol.HealthResult{OK: instance.state == protocol.StateRunning}
	case protocol.CmdRestart, protocol.CmdStart:
		if command == protocol.CmdRestart {
			instance.restarts++
		}
		instance.state, instance.why = protocol.StateRunning, ""
	case protocol.CmdStop:
		instance.state, instance.why = protocol.StateStopped, "stopped by an operator"
	}
	log := instance.log
	h.mu.Unlock()
	if log != nil {
		log.Append("hollow: " + app + " " + command + " by an operator")
	}
	h.emit()
	for _, status := range h.Instances() {
		if status.App == app {
			reply.Inst = &status
		}
	}
	return reply
}

// SampleUsage is empty: no processes.
func (h *Hollow) SampleUsage() []protocol.AppUsage { return []protocol.AppUsage{} }

// Shutdown stops the timers.
func (h *Hollow) Shutdown() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, instance := range h.apps {
		instance.timer.Stop()
	}
}
