// Package hollow runs many simulated agents in one process for load tests: each enrolls with the
// token, holds its own connection and credentials and speaks the real protocol; only the runtime,
// the host sampler and the buffers are simulated (hollow.ts of the reference agent).
package hollow

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edgefleet/edgefleet/apps/agent/agent"
	"github.com/edgefleet/edgefleet/apps/agent/backoff"
	"github.com/edgefleet/edgefleet/apps/agent/enroll"
	"github.com/edgefleet/edgefleet/apps/agent/metrics"
	"github.com/edgefleet/edgefleet/apps/agent/outbox"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
	"github.com/edgefleet/edgefleet/apps/agent/runtime"
)

// Options of a hollow fleet.
type Options struct {
	Count   int
	Token   string
	Servers []string
	// EnrollServers answer `ef.enroll`; default Servers.
	EnrollServers []string
	// EnrollCredsFile holds the public enrollment credentials (empty: a dev server without auth).
	EnrollCredsFile string
	// Node names are `<NamePrefix>-<i>`.
	NamePrefix string
	Labels     protocol.StringMap
	// EnrollConcurrency bounds enrollment requests in flight (default 64).
	EnrollConcurrency int
	// ConnectConcurrency bounds agents in their connect handshake at once (default 64).
	ConnectConcurrency int
	Reconnect          backoff.Policy
	AgentVersion, OS   string
	Arch               string
	Heartbeat, Metrics time.Duration
	Logger             *slog.Logger
	OnProgress         func(enrolled, started int)
}

// Fleet is the running hollow agents.
type Fleet struct {
	Identities []enroll.Identity
	Agents     []*agent.Agent
	EnrollTime time.Duration
}

// Start enrolls Count agents and starts them.
func Start(ctx context.Context, options Options) (*Fleet, error) {
	if options.EnrollConcurrency <= 0 {
		options.EnrollConcurrency = 64
	}
	if options.ConnectConcurrency <= 0 {
		options.ConnectConcurrency = 64
	}
	if options.Logger == nil {
		options.Logger = slog.New(slog.DiscardHandler)
	}
	servers := options.EnrollServers
	if len(servers) == 0 {
		servers = options.Servers
	}
	connectOptions := []nats.Option{nats.Name("edgefleet-hollow enroll " + options.NamePrefix), nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true)}
	if options.EnrollCredsFile != "" {
		connectOptions = append(connectOptions, nats.UserCredentials(options.EnrollCredsFile))
	}
	conn, err := nats.Connect(strings.Join(servers, ","), connectOptions...)
	if err != nil {
		return nil, fmt.Errorf("connect for enrollment: %w", err)
	}
	defer conn.Close()

	fleet := &Fleet{Identities: make([]enroll.Identity, options.Count)}
	started := time.Now()
	var (
		wait     sync.WaitGroup
		mu       sync.Mutex
		next     int
		enrolled int
		firstErr error
	)
	for range min(options.Count, options.EnrollConcurrency) {
		wait.Add(1)
		go func() {
			defer wait.Done()
			for {
				mu.Lock()
				index := next
				next++
				mu.Unlock()
				if index >= options.Count {
					return
				}
				identity, err := enroll.Enroll(ctx, enroll.Options{
					Conn: conn, Token: options.Token, Name: fmt.Sprintf("%s-%d", options.NamePrefix, index), Labels: options.Labels,
					AgentVersion: options.AgentVersion, OS: options.OS, Arch: options.Arch,
					Retry: backoff.Policy{Base: 500 * time.Millisecond, Max: 10 * time.Second}, Logger: options.Logger,
				})
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				fleet.Identities[index] = identity
				enrolled++
				if enrolled%500 == 0 && options.OnProgress != nil {
					options.OnProgress(enrolled, 0)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wait.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	fleet.EnrollTime = time.Since(started)

	// At most ConnectConcurrency agents in their handshake at once: a server drops a connection
	// that does not authenticate within its auth timeout.
	handshakes := make(chan struct{}, options.ConnectConcurrency)
	for _, identity := range fleet.Identities {
		handshakes <- struct{}{}
		a, err := agent.Start(Simulated(agent.Options{
			Servers: options.Servers,
			// Re-issued credentials stay in memory: a hollow fleet enrolls again at its next start.
			Credentials: agent.Credentials{JWT: identity.JWT, Seed: identity.Seed},
			Heartbeat:   options.Heartbeat, Metrics: options.Metrics, Reconnect: options.Reconnect,
			AgentVersion: options.AgentVersion, OS: options.OS, Arch: options.Arch,
			Name: "edgefleet-hollow " + identity.Wid, Logger: options.Logger,
		}))
		if err != nil {
			fleet.Stop()
			return nil, err
		}
		fleet.Agents = append(fleet.Agents, a)
		go func() {
			defer func() { <-handshakes }()
			deadline := time.Now().Add(30 * time.Second)
			for !a.Connected() && time.Now().Before(deadline) && ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond)
			}
		}()
		if len(fleet.Agents)%500 == 0 && options.OnProgress != nil {
			options.OnProgress(enrolled, len(fleet.Agents))
		}
	}
	return fleet, nil
}

// Simulated fills in what a hollow agent simulates: its runtime, host sampler and an in-memory
// outbox (no state file: StatePath stays empty).
func Simulated(options agent.Options) agent.Options {
	options.Runtime = runtime.NewHollow()
	options.Outbox = outbox.NewMemory(256 * 1024)
	options.HostSampler = &metrics.Synthetic{}
	return options
}

// Connected counts the agents holding a connection now.
func (f *Fleet) Connected() int {
	count := 0
	for _, a := range f.Agents {
		if a.Connected() {
			count++
		}
	}
	return count
}

// Stop stops every agent.
func (f *Fleet) Stop() {
	var wait sync.WaitGroup
	for _, a := range f.Agents {
		wait.Add(1)
		go func() {
			defer wait.Done()
			a.Stop(time.Second)
		}()
	}
	wait.Wait()
}
