package runtime

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/artifacts"
	"github.com/edgefleet/edgefleet/apps/agent/backoff"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

var fast = RestartBackoff{MinDelay: 50 * time.Millisecond, MaxDelay: 200 * time.Millisecond, StableAfter: time.Minute}

func i64(v int64) *int64 { return &v }

func newRuntime(t *testing.T, dir string) *Runtime {
	t.Helper()
	r := New(Options{AppsDir: dir, Backoff: fast, Fetch: artifacts.FetchOptions{Retry: backoff.Policy{Base: time.Millisecond, Max: 10 * time.Millisecond}},
		Refetch: backoff.Policy{Base: 50 * time.Millisecond, Max: 100 * time.Millisecond}, ProgressInterval: time.Millisecond})
	t.Cleanup(r.Shutdown)
	return r
}

func waitFor[T any](t *testing.T, what string, timeout time.Duration, probe func() (T, bool)) T {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if value, ok := probe(); ok {
			return value
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func instance(r *Runtime, app string) protocol.InstanceStatus {
	for _, status := range r.Instances() {
		if status.App == app {
			return status
		}
	}
	return protocol.InstanceStatus{}
}

func state(r *Runtime, app, want string) func() (protocol.InstanceStatus, bool) {
	return func() (protocol.InstanceStatus, bool) {
		status := instance(r, app)
		return status, status.St == want
	}
}

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

func why(status protocol.InstanceStatus) string {
	if status.Why == nil {
		return ""
	}
	return *status.Why
}

func TestRestartPolicies(t *testing.T) {
	cases := []struct {
		name     string
		command  []string
		restart  string
		want     string
		wantWhy  string
		restarts bool
	}{
		{"always restarts a crashing app", []string{"sh", "-c", "exit 3"}, "", protocol.StateFailed, "exited with code 3", true},
		{"on-failure leaves a clean exit stopped", []string{"true"}, "on-failure", protocol.StateStopped, "exited with code 0", false},
		{"never leaves a failure failed", []string{"sh", "-c", "kill -9 $$"}, "never", protocol.StateFailed, "killed by SIGKILL", false},
		{"a command that does not exist fails, and is tried again", []string{"/nonexistent/app"}, "", protocol.StateFailed, "cannot start", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRuntime(t, t.TempDir())
			r.Put("a", "1", protocol.RunSpec{Command: c.command, Restart: c.restart}, nil)
			status := waitFor(t, c.want, 5*time.Second, state(r, "a", c.want))
			if !strings.Contains(why(status), c.wantWhy) {
				t.Fatalf("why %q, want %q", why(status), c.wantWhy)
			}
			if c.restarts {
				waitFor(t, "restarts", 5*time.Second, func() (bool, bool) { return true, instance(r, "a").Rs >= 2 })
			} else {
				time.Sleep(300 * time.Millisecond)
				if got := instance(r, "a"); got.Rs != 0 || got.St != c.want {
					t.Fatalf("restarted: %+v", got)
				}
			}
		})
	}
}

func TestHealthChecks(t *testing.T) {
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer healthy.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }))
	defer broken.Close()
	one := i64(1)
	cases := []struct {
		name    string
		health  protocol.HealthCheck
		want    string
		wantWhy string
	}{
		{"exec passing", protocol.HealthCheck{Exec: []string{"true"}, IntervalSeconds: one}, protocol.StateRunning, ""},
		{"http passing", protocol.HealthCheck{HTTP: healthy.URL, IntervalSeconds: one}, protocol.StateRunning, ""},
		{"exec failing kills and restarts", protocol.HealthCheck{Exec: []string{"false"}, IntervalSeconds: one, FailureThreshold: i64(2)},
			protocol.StateFailed, "health check failed 2 times: exec false"},
		{"http failing", protocol.HealthCheck{HTTP: broken.URL, IntervalSeconds: one, FailureThreshold: one},
			protocol.StateFailed, "HTTP 503"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRuntime(t, t.TempDir())
			health := c.health
			r.Put("a", "1", protocol.RunSpec{Command: []string{"sleep", "60"}, Health: &health}, nil)
			if got := instance(r, "a").St; got != protocol.StateStarting && got != protocol.StatePending {
				t.Fatalf("before the first check: %s", got)
			}
			status := waitFor(t, c.want, 8*time.Second, state(r, "a", c.want))
			if !strings.Contains(why(status), c.wantWhy) {
				t.Fatalf("why %q, want %q", why(status), c.wantWhy)
			}
		})
	}
}

func TestStopEscalatesToSIGKILLAndLeavesNoOrphans(t *testing.T) {
	dir := t.TempDir()
	r := New(Options{AppsDir: dir, Backoff: fast})
	pids := filepath.Join(dir, "pids")
	// Ignores SIGTERM, and spawns a child of its own that ignores it too.
	script := fmt.Sprintf(`trap '' TERM; sleep 60 & echo $$ $! > %s; wait`, pids)
	r.Put("stubborn", "1", protocol.RunSpec{Command: []string{"sh", "-c", script}, StopGraceSeconds: i64(1)}, nil)
	text := waitFor(t, "pids", 5*time.Second, func() (string, bool) {
		data, err := os.ReadFile(pids)
		return string(data), err == nil && len(strings.Fields(string(data))) == 2
	})
	var shell, child int
	fmt.Sscan(text, &shell, &child)
	started := time.Now()
	r.Shutdown()
	if elapsed := time.Since(started); elapsed < 900*time.Millisecond || elapsed > 5*time.Second {
		t.Fatalf("stop took %v, want the 1 s grace then SIGKILL", elapsed)
	}
	waitFor(t, "no process left", 2*time.Second, func() (bool, bool) { return true, !alive(shell) && !alive(child) })
	if got := instance(r, "stubborn").St; got != protocol.StateStopped {
		t.Fatalf("state %s", got)
	}
}

func TestAProcessLeftByACrashedAgentIsEnded(t *testing.T) {
	dir := t.TempDir()
	first := New(Options{AppsDir: dir, Backoff: fast})
	first.Put("a", "1", protocol.RunSpec{Command: []string{"sleep", "60"}}, nil)
	pid := waitFor(t, "running", 5*time.Second, func() (int, bool) {
		pid := first.apps["a"].PID()
		return pid, pid > 0
	})
	// The agent dies without stopping its app (SIGKILL): a new agent run must not run it twice.
	second := newRuntime(t, dir)
	second.Put("a", "1", protocol.RunSpec{Command: []string{"sleep", "60"}}, nil)
	waitFor(t, "leftover ended", 5*time.Second, func() (bool, bool) {
		_, err := os.Stat(fmt.Sprintf("/proc/%d/stat", pid))
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return true, err != nil || strings.Contains(string(stat), ") Z ")
	})
	waitFor(t, "running again", 5*time.Second, state(second, "a", protocol.StateRunning))
}

// memorySource serves artifacts from memory.
type memorySource struct {
	mu      sync.Mutex
	objects map[string][]byte
}

func (m *memorySource) put(data []byte) string {
	sum := sha256.Sum256(data)
	name := hex.EncodeToString(sum[:])
	m.mu.Lock()
	m.objects[name] = data
	m.mu.Unlock()
	return name
}

func (m *memorySource) Chunk(_ context.Context, obj string, offset, length int64) (artifacts.ChunkAnswer, error) {
	m.mu.Lock()
	data, ok := m.objects[obj]
	m.mu.Unlock()
	if !ok {
		return artifacts.ChunkAnswer{Err: "not_found"}, nil
	}
	end := min(int64(len(data)), offset+length)
	return artifacts.ChunkAnswer{Size: int64(len(data)), Data: data[offset:end]}, nil
}

// tarball holds run.sh: records its pid in pidDir/<version>, creates `ready` when healthy.
func tarball(t *testing.T, pidDir, version string, healthy bool) []byte {
	script := fmt.Sprintf("echo $$ > %s/%s\n", pidDir, version)
	if healthy {
		script += "touch ready\n"
	}
	script += "exec sleep 60\n"
	var buffer bytes.Buffer
	zipper := gzip.NewWriter(&buffer)
	writer := tar.NewWriter(zipper)
	_ = writer.WriteHeader(&tar.Header{Name: "run.sh", Mode: 0o755, Size: int64(len(script)), Typeflag: tar.TypeReg})
	_, _ = writer.Write([]byte(script))
	_ = writer.Close()
	_ = zipper.Close()
	return buffer.Bytes()
}

func readPID(dir, version string) int {
	data, _ := os.ReadFile(filepath.Join(dir, version))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

func TestVersionSwitches(t *testing.T) {
	dir, pidDir := t.TempDir(), t.TempDir()
	source := &memorySource{objects: map[string][]byte{}}
	r := newRuntime(t, dir)
	r.UseChunkSource(source)
	one := i64(1)
	spec := protocol.RunSpec{Command: []string{"sh", "run.sh"}, RevertOnFailure: new(bool),
		Health: &protocol.HealthCheck{Exec: []string{"test", "-f", "ready"}, IntervalSeconds: one, TimeoutSeconds: one, FailureThreshold: i64(2)}}
	*spec.RevertOnFailure = true

	// 1.0: fetched, verified, unpacked, running from its version directory.
	v1 := source.put(tarball(t, pidDir, "1.0", true))
	r.Put("reader", "1.0", spec, &protocol.ArtifactRef{Sha: v1})
	waitFor(t, "1.0 running", 10*time.Second, func() (bool, bool) {
		s := instance(r, "reader")
		return true, s.St == protocol.StateRunning && s.Ver == "1.0"
	})
	pid1 := readPID(pidDir, "1.0")
	if _, err := os.Stat(filepath.Join(dir, "reader", "versions", v1, "run.sh")); err != nil || !alive(pid1) {
		t.Fatalf("1.0 not installed or not alive: %v", err)
	}

	// 2.0 states a hash its artifact does not have: refused, 1.0 keeps running.
	v2 := source.put(tarball(t, pidDir, "2.0", true))
	wrong := strings.Repeat("ab", 32)
	r.Put("reader", "2.0", spec, &protocol.ArtifactRef{Sha: wrong, Obj: v2})
	refused := waitFor(t, "2.0 refused", 5*time.Second, state(r, "reader", protocol.StateFailed))
	wantWhy := fmt.Sprintf("artifact SHA-256 mismatch: expected %s, got %s; still running 1.0", wrong, v2)
	if why(refused) != wantWhy || refused.Ver != "1.0" || refused.Tgt != "2.0" || !alive(pid1) {
		t.Fatalf("refusal: %+v (%s)", refused, why(refused))
	}

	// 3.0 never passes its health check: failed within its start window, reverted to 1.0.
	v3 := source.put(tarball(t, pidDir, "3.0", false))
	r.Put("reader", "3.0", spec, &protocol.ArtifactRef{Sha: v3})
	reverted := waitFor(t, "3.0 reverted", 15*time.Second, func() (protocol.InstanceStatus, bool) {
		s := instance(r, "reader")
		return s, s.St == protocol.StateFailed && strings.Contains(why(s), "reverted to 1.0")
	})
	if !strings.HasPrefix(why(reverted), "3.0 failed within its 3 s start window: ") || reverted.Tgt != "3.0" {
		t.Fatalf("revert: %+v (%s)", reverted, why(reverted))
	}
	pid1Again := waitFor(t, "1.0 running again", 5*time.Second, func() (int, bool) {
		pid := readPID(pidDir, "1.0")
		return pid, pid != pid1 && alive(pid)
	})
	if alive(readPID(pidDir, "3.0")) || alive(pid1) {
		t.Fatal("two versions alive")
	}

	// An agent restart: 1.0 runs again from slot.json, 3.0 is not tried again.
	r.Shutdown()
	if alive(pid1Again) {
		t.Fatal("shutdown left 1.0 running")
	}
	restarted := newRuntime(t, dir)
	restarted.UseChunkSource(source)
	restarted.Put("reader", "3.0", spec, &protocol.ArtifactRef{Sha: v3})
	after := waitFor(t, "1.0 after the restart", 10*time.Second, func() (protocol.InstanceStatus, bool) {
		s := instance(restarted, "reader")
		return s, s.Ver == "1.0" && s.St == protocol.StateFailed && alive(readPID(pidDir, "1.0")) && readPID(pidDir, "1.0") != pid1Again
	})
	if after.Tgt != "3.0" {
		t.Fatalf("after restart: %+v", after)
	}

	// Removed from the node: the process ends and its versions are deleted.
	restarted.Remove("reader")
	waitFor(t, "removed", 5*time.Second, func() (bool, bool) { return true, len(restarted.Instances()) == 0 })
	if _, err := os.Stat(filepath.Join(dir, "reader", "versions")); !os.IsNotExist(err) {
		t.Fatalf("versions left: %v", err)
	}
	if alive(readPID(pidDir, "1.0")) {
		t.Fatal("removed app still running")
	}
}

func TestUnknownArtifactIsRetriedUntilUploaded(t *testing.T) {
	source := &memorySource{objects: map[string][]byte{}}
	r := newRuntime(t, t.TempDir())
	r.UseChunkSource(source)
	data := tarball(t, t.TempDir(), "1.0", true)
	sum := sha256.Sum256(data)
	sha := hex.EncodeToString(sum[:])
	r.Put("late", "1.0", protocol.RunSpec{Command: []string{"sh", "run.sh"}}, &protocol.ArtifactRef{Sha: sha})
	status := waitFor(t, "not found yet", 5*time.Second, state(r, "late", protocol.StateFailed))
	if !strings.Contains(why(status), "not found") {
		t.Fatalf("why %q", why(status))
	}
	source.put(data)
	waitFor(t, "running once uploaded", 10*time.Second, state(r, "late", protocol.StateRunning))
}

func TestSafeDirName(t *testing.T) {
	for in, want := range map[string]string{"plate-reader": "plate-reader", "../../etc": "__.._etc", "..": "_", "a/b c": "a_b_c"} {
		if got := SafeDirName(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func TestACorruptSlotFileStartsFromTheDesiredState(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "slot.json"), []byte(`{"current": {"version": 3`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRuntime(t, dir)
	r.Put("a", "1", protocol.RunSpec{Command: []string{"sleep", "60"}}, nil)
	status := waitFor(t, "running", 5*time.Second, state(r, "a", protocol.StateRunning))
	if status.Ver != "1" {
		t.Fatalf("status %+v", status)
	}
}
