// Package backoff holds the agent's one retry policy: exponential backoff with full jitter.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy bounds the delays: the first retry waits up to Base, no retry waits more than Max.
type Policy struct {
	Base time.Duration
	Max  time.Duration
}

// Delay is "full jitter": uniformly random in [0, min(Max, Base·2^attempt)). It spreads a fleet's
// reconnect storm over the whole window instead of synchronized waves.
func (p Policy) Delay(attempt int) time.Duration {
	return p.DelayWith(attempt, rand.Float64)
}

// DelayWith is Delay with a given source of randomness in [0, 1) (tests).
func (p Policy) DelayWith(attempt int, random func() float64) time.Duration {
	ceiling := p.Ceiling(attempt)
	return time.Duration(random() * float64(ceiling))
}

// Ceiling is the largest delay of an attempt: min(Max, Base·2^attempt).
func (p Policy) Ceiling(attempt int) time.Duration {
	attempt = min(max(attempt, 0), 30)
	ceiling := p.Base << attempt
	if ceiling > p.Max || ceiling <= 0 {
		ceiling = p.Max
	}
	return ceiling
}

// Sleep waits d or until ctx ends; it reports whether the whole wait passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
