package agent

import (
	"time"
)

// periodicTask is one task of a schedule: heartbeat, metrics, status refresh.
type periodicTask struct {
	name     string
	interval func() time.Duration
	// jittered: the first tick after start, and the first after an interval change, comes at a
	// random point of the interval (agents started together do not tick together); the next ones
	// come an interval after the task ended. Not jittered: ticks on the grid start+k·interval, as a
	// time.Ticker's.
	jittered bool
	// async: the task may block (a network round trip); the run loop starts it on its own goroutine
	// and the schedule waits for it to end before the next tick is planned, as a task run inline.
	async bool
	run   func()
	// quietUntil, when set, may hold a due task back: the tick moves to the time it returns if that
	// is later (the heartbeat, while metrics reports stand in for it).
	quietUntil func() time.Time

	due     time.Time
	running bool
	// restart: the intervals changed while the task ran; its next tick is jittered again.
	restart bool
}

// schedule plans the periodic tasks of one agent on one timer: it holds no goroutine and reads no
// clock, the run loop hands it the time (tests hand it any).
type schedule struct {
	tasks  []*periodicTask
	random func() float64 // in [0, 1)
}

func newSchedule(now time.Time, random func() float64, tasks ...*periodicTask) *schedule {
	s := &schedule{tasks: tasks, random: random}
	for _, task := range tasks {
		if task.jittered {
			task.due = now.Add(s.jitter(task.interval()))
		} else {
			task.due = now.Add(task.interval())
		}
	}
	return s
}

func (s *schedule) jitter(interval time.Duration) time.Duration {
	return time.Duration(s.random() * float64(interval))
}

// intervalsChanged restarts the jittered tasks at a random point of their (new) interval from now;
// one that runs now does so when it ends.
func (s *schedule) intervalsChanged(now time.Time) {
	for _, task := range s.tasks {
		if !task.jittered {
			continue
		}
		if task.running {
			task.restart = true
			continue
		}
		task.due = now.Add(s.jitter(task.interval()))
	}
}

// next is when the earliest task not running is due; false when every task runs.
func (s *schedule) next() (time.Time, bool) {
	var earliest time.Time
	found := false
	for _, task := range s.tasks {
		if !task.running && (!found || task.due.Before(earliest)) {
			earliest, found = task.due, true
		}
	}
	return earliest, found
}

// take marks the tasks due at now running and returns them in their schedule order.
func (s *schedule) take(now time.Time) []*periodicTask {
	var due []*periodicTask
	for _, task := range s.tasks {
		if !task.running && !task.due.After(now) && task.quietUntil != nil {
			if quiet := task.quietUntil(); quiet.After(now) {
				task.due = quiet
				continue
			}
		}
		if !task.running && !task.due.After(now) {
			task.running = true
			due = append(due, task)
		}
	}
	return due
}

// finished plans the task's next tick; now is when it ended.
func (s *schedule) finished(task *periodicTask, now time.Time) {
	task.running = false
	interval := task.interval()
	switch {
	case task.restart:
		task.restart = false
		task.due = now.Add(s.jitter(interval))
	case task.jittered:
		task.due = now.Add(interval)
	default:
		// As a time.Ticker: a tick missed while the task ran is delivered at once (one, the latest),
		// and the grid goes on.
		task.due = task.due.Add(interval)
		if !task.due.After(now) && interval > 0 {
			task.due = task.due.Add(now.Sub(task.due) / interval * interval)
		}
	}
}
