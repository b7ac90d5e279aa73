package backoff

import (
	"testing"
	"time"
)

func TestFullJitterStaysUnderTheDoublingCeiling(t *testing.T) {
	policy := Policy{Base: 500 * time.Millisecond, Max: 30 * time.Second}
	cases := []struct {
		attempt int
		random  float64
		want    time.Duration
	}{
		{0, 0.999, 499 * time.Millisecond},
		{1, 0.5, 500 * time.Millisecond},
		{3, 0.5, 2 * time.Second},
		{6, 0.999, 29970 * time.Millisecond}, // 32 s capped to 30 s
		{1000, 0.5, 15 * time.Second},        // no overflow for huge attempts
		{-1, 0.5, 250 * time.Millisecond},
		{2, 0, 0},
	}
	for _, c := range cases {
		got := policy.DelayWith(c.attempt, func() float64 { return c.random })
		if got.Truncate(time.Millisecond) != c.want {
			t.Errorf("attempt %d, random %v: got %v, want %v", c.attempt, c.random, got, c.want)
		}
	}
}

func TestDelaysSpreadOverTheWindow(t *testing.T) {
	policy := Policy{Base: time.Second, Max: 8 * time.Second}
	var below, above int
	for range 2000 {
		d := policy.Delay(5)
		if d < 0 || d >= 8*time.Second {
			t.Fatalf("delay %v outside [0, 8s)", d)
		}
		if d < 4*time.Second {
			below++
		} else {
			above++
		}
	}
	if below < 800 || above < 800 {
		t.Fatalf("not spread: %d below 4 s, %d above", below, above)
	}
}
