package agent

import (
	mathrand "math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/internal/testnats"
	"github.com/edgefleet/edgefleet/apps/agent/metrics"
	"github.com/edgefleet/edgefleet/apps/agent/outbox"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
	agentruntime "github.com/edgefleet/edgefleet/apps/agent/runtime"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func constant(d time.Duration) func() time.Duration { return func() time.Duration { return d } }

// fixedRandom hands out the values in turn (the schedule's random source in tests).
func fixedRandom(values ...float64) func() float64 {
	return func() float64 {
		value := values[0]
		if len(values) > 1 {
			values = values[1:]
		}
		return value
	}
}

func TestTheFirstTickIsAtARandomPointOfTheInterval(t *testing.T) {
	for _, c := range []struct {
		name     string
		random   float64
		interval time.Duration
		jittered bool
		want     time.Duration
	}{
		{"jittered, at the start", 0, 30 * time.Second, true, 0},
		{"jittered, half way", 0.5, 30 * time.Second, true, 15 * time.Second},
		{"jittered, near the end", 0.999, time.Minute, true, 59940 * time.Millisecond},
		{"not jittered: a whole interval (status refresh)", 0.5, 10 * time.Minute, false, 10 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			task := &periodicTask{interval: constant(c.interval), jittered: c.jittered}
			plan := newSchedule(t0, fixedRandom(c.random), task)
			if got := task.due.Sub(t0); got != c.want {
				t.Fatalf("first tick after %s, want %s", got, c.want)
			}
			if wake, ok := plan.next(); !ok || !wake.Equal(task.due) {
				t.Fatalf("next %v %v, want %v", wake, ok, task.due)
			}
		})
	}
	// Agents started together spread their first ticks over the whole interval.
	lowest, highest := time.Hour, time.Duration(0)
	for range 1000 {
		task := &periodicTask{interval: constant(time.Minute), jittered: true}
		newSchedule(t0, mathrand.Float64, task)
		offset := task.due.Sub(t0)
		if offset < 0 || offset >= time.Minute {
			t.Fatalf("first tick %s after the start, outside the interval", offset)
		}
		lowest, highest = min(lowest, offset), max(highest, offset)
	}
	if lowest > 6*time.Second || highest < 54*time.Second {
		t.Fatalf("1000 first ticks between %s and %s: not spread over the interval", lowest, highest)
	}
}

func TestIntervalsChangedMidWaitRestartTheJitteredTasks(t *testing.T) {
	for _, c := range []struct {
		name string
		// running: the task runs when the intervals change (it ends at ended).
		running bool
		ended   time.Duration
		want    time.Duration // the next tick, after t0
	}{
		{"waiting: a random point of the new interval from the change", false, 0, 10*time.Second + 2500*time.Millisecond},
		{"running: a random point of the new interval from its end", true, 11 * time.Second, 11*time.Second + 2500*time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			interval := time.Hour
			heartbeat := &periodicTask{interval: func() time.Duration { return interval }, jittered: true}
			status := &periodicTask{interval: constant(10 * time.Minute)}
			// Random values: the first tick (half an hour in), then the one after the change.
			plan := newSchedule(t0, fixedRandom(0.5, 0.25), heartbeat, status)
			if c.running {
				heartbeat.due = t0.Add(5 * time.Second)
				if got := plan.take(t0.Add(5 * time.Second)); len(got) != 1 || got[0] != heartbeat {
					t.Fatalf("took %v", got)
				}
			}
			interval = 10 * time.Second
			plan.intervalsChanged(t0.Add(10 * time.Second))
			if c.running {
				if wake, _ := plan.next(); !wake.Equal(status.due) {
					t.Fatalf("a running task was planned: next %v", wake)
				}
				plan.finished(heartbeat, t0.Add(c.ended))
			}
			if got := heartbeat.due.Sub(t0); got != c.want {
				t.Fatalf("next heartbeat %s after the start, want %s", got, c.want)
			}
			if got := status.due.Sub(t0); got != 10*time.Minute {
				t.Fatalf("the status refresh moved to %s", got)
			}
			// Then every interval after the task ended.
			plan.take(heartbeat.due)
			plan.finished(heartbeat, heartbeat.due.Add(time.Second))
			if got := heartbeat.due.Sub(t0); got != c.want+11*time.Second {
				t.Fatalf("following heartbeat %s after the start, want %s", got, c.want+11*time.Second)
			}
		})
	}
}

func TestTheScheduleWakesForTheEarliestTaskNotRunning(t *testing.T) {
	heartbeat := &periodicTask{interval: constant(30 * time.Second), jittered: true}
	metrics := &periodicTask{interval: constant(60 * time.Second), jittered: true}
	status := &periodicTask{interval: constant(10 * time.Minute)}
	plan := newSchedule(t0, fixedRandom(0.5, 0.1), heartbeat, metrics, status)
	steps := []struct {
		now   time.Duration
		take  []*periodicTask
		after time.Duration // next wake after t0 once taken
	}{
		{0, nil, 6 * time.Second},
		{6 * time.Second, []*periodicTask{metrics}, 15 * time.Second},
		{20 * time.Second, []*periodicTask{heartbeat}, 10 * time.Minute}, // both running: the status refresh
	}
	for _, step := range steps {
		got := plan.take(t0.Add(step.now))
		if len(got) != len(step.take) || (len(got) == 1 && got[0] != step.take[0]) {
			t.Fatalf("at %s took %d tasks, want %d", step.now, len(got), len(step.take))
		}
		if wake, ok := plan.next(); !ok || wake.Sub(t0) != step.after {
			t.Fatalf("at %s next wake %s (%v), want %s", step.now, wake.Sub(t0), ok, step.after)
		}
	}
	plan.take(t0.Add(10 * time.Minute))
	if _, ok := plan.next(); ok {
		t.Fatal("every task runs, yet a wake is planned")
	}
}

func TestAQuietTaskIsHeldBackUntilItsQuietEnds(t *testing.T) {
	quiet := time.Time{}
	heartbeat := &periodicTask{interval: constant(60 * time.Second), jittered: true,
		quietUntil: func() time.Time { return quiet }}
	plan := newSchedule(t0, fixedRandom(0.5), heartbeat)
	for _, step := range []struct {
		name  string
		now   time.Duration
		quiet time.Duration // after t0; 0: none
		runs  bool
		due   time.Duration // after t0, once taken
	}{
		{"a report acknowledged 10 s ago: held until a 63 s quiet ends", 30 * time.Second, 83 * time.Second, false, 83 * time.Second},
		{"woken at the end of the quiet, a newer report moved it on", 83 * time.Second, 143 * time.Second, false, 143 * time.Second},
		{"the reports stopped: the quiet is over, the heartbeat runs", 143 * time.Second, 143 * time.Second, true, 143 * time.Second},
	} {
		quiet = time.Time{}
		if step.quiet > 0 {
			quiet = t0.Add(step.quiet)
		}
		taken := plan.take(t0.Add(step.now))
		if (len(taken) == 1) != step.runs {
			t.Fatalf("%s: took %d tasks", step.name, len(taken))
		}
		if got := heartbeat.due.Sub(t0); got != step.due {
			t.Fatalf("%s: due at %s, want %s", step.name, got, step.due)
		}
	}
	plan.finished(heartbeat, t0.Add(143*time.Second))
	if got := heartbeat.due.Sub(t0); got != 203*time.Second {
		t.Fatalf("after it ran, next due at %s, want an interval later (203 s)", got)
	}
}

func TestTheStatusRefreshKeepsATickersGrid(t *testing.T) {
	for _, c := range []struct {
		name  string
		ended time.Duration // when the run of the tick at 10 min ended
		want  time.Duration
	}{
		{"on time", 10*time.Minute + time.Second, 20 * time.Minute},
		{"late past one tick: that tick at once", 21 * time.Minute, 20 * time.Minute},
		{"late past two ticks: only the latest", 35 * time.Minute, 30 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			status := &periodicTask{interval: constant(10 * time.Minute)}
			plan := newSchedule(t0, fixedRandom(0.5), status)
			plan.take(t0.Add(10 * time.Minute))
			plan.finished(status, t0.Add(c.ended))
			if got := status.due.Sub(t0); got != c.want {
				t.Fatalf("next refresh %s after the start, want %s", got, c.want)
			}
		})
	}
}

// startHollowAgent starts an agent with a simulated runtime and intervals of an hour until a
// HelloReply names others.
func startHollowAgent(t *testing.T, server *testnats.Server) *Agent {
	t.Helper()
	a, err := Start(Options{
		Servers: []string{server.URL}, Credentials: Credentials{JWT: testnats.NodeJWT(wid, testnats.Site), Seed: testnats.Seed},
		Runtime: agentruntime.NewHollow(), Outbox: outbox.NewMemory(1 << 20), HostSampler: &metrics.Synthetic{},
		Heartbeat: time.Hour, Metrics: time.Hour, RequestTimeout: time.Second, AgentVersion: "0.1.0-test", OS: "linux", Arch: "x64",
		Logger: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestAHelloReplysIntervalsApplyAtOnceNotAfterTheWaitForTheOldOnes(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid) // answers Hello with hb 1 s, mx 1 s
	a := startHollowAgent(t, server)
	defer a.Stop(time.Second)
	// The first ticks were planned at a random point of an hour; the HelloReply's second replans
	// them within a second of it.
	waitFor(t, "the Hello answered", 5*time.Second, func() (bool, bool) { return true, a.HellosAnswered() > 0 })
	waitFor(t, "heartbeats at the HelloReply's interval", 5*time.Second, func() (bool, bool) {
		return true, a.Stats().HeartbeatsSent >= 2
	})
	waitFor(t, "metrics at the HelloReply's interval", 5*time.Second, func() (bool, bool) {
		return true, len(stored[protocol.MetricsReport](platform, "mx")) >= 2
	})
}

func TestStopEndsTheRunLoopAndItsJobs(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, server *testnats.Server)
	}{
		// No one answers Hello: the agent waits in Hello's backoff (a second, then two…).
		{"hello unanswered, in its backoff", func(*testing.T, *testnats.Server) {}},
		// Hello answered, no EF_UP stream: the flush fails and waits for its retry.
		{"reports undeliverable, the flush in its backoff", func(t *testing.T, server *testnats.Server) {
			testnats.AnswerHellos(t, server, sleeper("1"))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			server := testnats.Start(t)
			c.setup(t, server)
			before := runtime.NumGoroutine()
			a := startHollowAgent(t, server)
			waitFor(t, "the connection", 5*time.Second, func() (bool, bool) { return true, a.Connected() })
			time.Sleep(1500 * time.Millisecond)
			stopped := make(chan struct{})
			go func() {
				a.Stop(0)
				close(stopped)
			}()
			select {
			case <-stopped:
			case <-time.After(5 * time.Second):
				t.Fatal("Stop did not return within 5 s")
			}
			waitFor(t, "the agent's goroutines to end", 5*time.Second, func() (int, bool) {
				return 0, runtime.NumGoroutine() <= before
			})
		})
	}
}
