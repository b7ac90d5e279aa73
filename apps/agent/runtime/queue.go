package runtime

import "sync"

// serialQueue runs operations one at a time in the order given, each in a goroutine of its own
// turn; adding never blocks (process callbacks add from their own goroutines).
type serialQueue struct {
	mu      sync.Mutex
	items   []func()
	running bool
}

func (q *serialQueue) add(operation func()) {
	q.mu.Lock()
	q.items = append(q.items, operation)
	if q.running {
		q.mu.Unlock()
		return
	}
	q.running = true
	q.mu.Unlock()
	go q.drain()
}

func (q *serialQueue) drain() {
	for {
		q.mu.Lock()
		if len(q.items) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		next := q.items[0]
		q.items = q.items[1:]
		q.mu.Unlock()
		next()
	}
}

// run adds an operation and waits until it ran.
func (q *serialQueue) run(operation func()) {
	done := make(chan struct{})
	q.add(func() {
		defer close(done)
		operation()
	})
	<-done
}
