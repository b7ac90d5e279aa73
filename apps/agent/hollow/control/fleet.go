package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edgefleet/edgefleet/apps/agent/agent"
	"github.com/edgefleet/edgefleet/apps/agent/backoff"
	"github.com/edgefleet/edgefleet/apps/agent/enroll"
	"github.com/edgefleet/edgefleet/apps/agent/hollow"
)

const (
	// handshakeSlot bounds how long one connecting agent holds a connect slot: an agent that cannot
	// connect keeps retrying on its own.
	handshakeSlot = 30 * time.Second
	// churnStopFlush and shutdownFlush bound the wait for an agent's buffered reports when it stops.
	churnStopFlush = 500 * time.Millisecond
	shutdownFlush  = 200 * time.Millisecond
	// shutdownBound: a fleet that cannot say goodbye in time is killed by the driver anyway.
	shutdownBound = 15 * time.Second
)

// Options of a controlled fleet.
type Options struct {
	AgentVersion, OS, Arch string
	// Heartbeat and Metrics apply until the control plane's HelloReply names the intervals.
	Heartbeat, Metrics time.Duration
	Logger             *slog.Logger
}

// node is one enrolled hollow node; its agent comes and goes with stop and restart.
type node struct {
	nid, name, url string
	seed           string

	credentialsMu sync.Mutex
	jwt           string

	mu     sync.Mutex
	agent  *agent.Agent
	outbox agent.Outbox
	// state is the stopped agent's, for its restart (last applied revision, report sequences).
	state *agent.State
	// delivered counts the reports acknowledged to this node's stopped agents.
	delivered int64
}

func (n *node) credentials() agent.Credentials {
	n.credentialsMu.Lock()
	defer n.credentialsMu.Unlock()
	return agent.Credentials{JWT: n.jwt, Seed: n.seed}
}

// saveCredentials keeps re-issued credentials (a site move) for the node's next start.
func (n *node) saveCredentials(jwt string) error {
	n.credentialsMu.Lock()
	defer n.credentialsMu.Unlock()
	n.jwt = jwt
	return nil
}

// running is the node's agent, nil while stopped.
func (n *node) running() *agent.Agent {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.agent
}

// fleet is the hollow nodes of one generator process.
type fleet struct {
	options Options

	mu            sync.Mutex
	nodes         []*node // in enrollment order: the connect order
	byNid         map[string]*node
	statusRefresh time.Duration
	started       int
	enrolled      atomic.Int64
}

func newFleet(options Options) *fleet {
	if options.Logger == nil {
		options.Logger = slog.New(slog.DiscardHandler)
	}
	return &fleet{options: options, byNid: map[string]*node{}}
}

// handle runs one command to its reply.
func (f *fleet) handle(ctx context.Context, command Command) (Reply, error) {
	switch c := command.(type) {
	case Enroll:
		return f.enroll(ctx, c)
	case Connect:
		return f.connect(ctx, c)
	case Stop:
		return f.stop(c.Nids), nil
	case Restart:
		return f.restart(c.Nids)
	case WatchHellos:
		return f.watchHellos(ctx, c)
	default:
		return nil, fmt.Errorf("no handler for %T", command)
	}
}

// enroll enrolls the command's share of nodes through one connection; a failed enrollment is
// counted, the others go on.
func (f *fleet) enroll(ctx context.Context, command Enroll) (Enrolled, error) {
	connectOptions := []nats.Option{
		nats.Name(fmt.Sprintf("%s-enroll-%d", command.NamePrefix, command.FirstIndex)),
		nats.MaxReconnects(-1),
	}
	if command.EnrollCreds != "" {
		jwt, seed, err := enroll.ParseCreds(command.EnrollCreds)
		if err != nil {
			return Enrolled{}, fmt.Errorf("enroll: enrollCreds: %w", err)
		}
		connectOptions = append(connectOptions, nats.UserJWTAndSeed(jwt, seed))
	}
	conn, err := nats.Connect(command.NatsURL, connectOptions...)
	if err != nil {
		return Enrolled{}, fmt.Errorf("enroll: connect to %s: %w", command.NatsURL, err)
	}
	defer conn.Close()
	urls := command.AgentURLs
	if len(urls) == 0 {
		urls = []string{command.NatsURL}
	}
	tokens := command.AgentTokens
	if len(tokens) == 0 {
		tokens = []string{command.Token}
	}
	f.mu.Lock()
	f.statusRefresh = time.Duration(command.StatusRefreshSeconds * float64(time.Second))
	f.mu.Unlock()

	var (
		next     atomic.Int64
		wait     sync.WaitGroup
		failMu   sync.Mutex
		failures int
		firstErr error
	)
	for range min(command.Concurrency, command.Count) {
		wait.Go(func() {
			for {
				offset := int(next.Add(1) - 1)
				if offset >= command.Count || ctx.Err() != nil {
					return
				}
				index := command.FirstIndex + offset
				name := fmt.Sprintf("%s-%d", command.NamePrefix, index)
				identity, err := enroll.Enroll(ctx, enroll.Options{
					Conn: conn, Token: tokens[index%len(tokens)], Name: name,
					AgentVersion: f.options.AgentVersion, OS: f.options.OS, Arch: f.options.Arch,
					Retry: backoff.Policy{Base: 500 * time.Millisecond, Max: 5 * time.Second}, Logger: f.options.Logger,
				})
				if err != nil {
					failMu.Lock()
					failures++
					if firstErr == nil {
						firstErr = fmt.Errorf("%s: %w", name, err)
					}
					failMu.Unlock()
					continue
				}
				f.add(&node{nid: identity.Nid, name: name, url: urls[index%len(urls)], seed: identity.Seed, jwt: identity.JWT})
			}
		})
	}
	wait.Wait()
	if ctx.Err() != nil {
		return Enrolled{}, fmt.Errorf("enroll: %w", ctx.Err())
	}
	reply := Enrolled{Nodes: f.names(), Failures: failures}
	if firstErr != nil {
		reply.FirstError = firstErr.Error()
	}
	return reply, nil
}

func (f *fleet) add(n *node) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nodes = append(f.nodes, n)
	f.byNid[n.nid] = n
	f.enrolled.Add(1)
}

// names lists every node enrolled so far (all of this process's, as the Node worker does).
func (f *fleet) names() []NodeName {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := make([]NodeName, 0, len(f.nodes))
	for _, n := range f.nodes {
		names = append(names, NodeName{Nid: n.nid, Name: n.name})
	}
	return names
}

func (f *fleet) snapshot() []*node {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.nodes)
}

// connect starts every enrolled agent that is not running, spread evenly at PerSecond (a fleet
// coming up, not one burst), with at most MaxInFlight still in their handshake: past that,
// starting more only makes every handshake slower until the server's auth timeout drops them.
func (f *fleet) connect(ctx context.Context, command Connect) (Started, error) {
	nodes := f.snapshot()
	times := make([]NodeTime, 0, len(nodes))
	slots := make(chan struct{}, command.MaxInFlight)
	begin := time.Now()
	for _, n := range nodes {
		due := begin.Add(time.Duration(float64(len(times)) * float64(time.Second) / command.PerSecond))
		if err := sleepUntil(ctx, due); err != nil {
			return Started{}, fmt.Errorf("connect: %w", err)
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return Started{}, fmt.Errorf("connect: %w", ctx.Err())
		}
		at := time.Now()
		a, err := f.start(n)
		if errors.Is(err, errRunning) {
			<-slots
			continue
		}
		if err != nil {
			<-slots
			return Started{}, fmt.Errorf("connect: %w", err)
		}
		times = append(times, NodeTime{Nid: n.nid, At: at.UnixMilli()})
		go func() {
			defer func() { <-slots }()
			waitConnected(ctx, a, handshakeSlot)
		}()
	}
	return Started{Nodes: times}, nil
}

var errRunning = errors.New("agent already running")

// start starts the node's agent from its kept state and credentials.
func (f *fleet) start(n *node) (*agent.Agent, error) {
	f.mu.Lock()
	statusRefresh := f.statusRefresh
	f.mu.Unlock()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.agent != nil {
		return nil, errRunning
	}
	options := hollow.Simulated(agent.Options{
		Servers:         []string{n.url},
		Credentials:     n.credentials(),
		SaveCredentials: n.saveCredentials,
		State:           n.state,
		StatusRefresh:   statusRefresh,
		Heartbeat:       f.options.Heartbeat, Metrics: f.options.Metrics,
		AgentVersion: f.options.AgentVersion, OS: f.options.OS, Arch: f.options.Arch,
		// The name is how a benchmark finds its agents' connections in the server's /connz.
		Name:   n.name,
		Logger: f.options.Logger.With("node", n.name),
	})
	a, err := agent.Start(options)
	if err != nil {
		return nil, fmt.Errorf("start the agent of %s: %w", n.name, err)
	}
	n.agent, n.outbox = a, options.Outbox
	f.mu.Lock()
	f.started++
	f.mu.Unlock()
	return a, nil
}

func waitConnected(ctx context.Context, a *agent.Agent, bound time.Duration) {
	deadline := time.Now().Add(bound)
	for !a.Connected() && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
}

// stop stops the running agents of nids at once, keeping their state for a restart.
func (f *fleet) stop(nids []string) Stopped {
	times := make(chan NodeTime, len(nids))
	var wait sync.WaitGroup
	for _, n := range f.lookup(nids) {
		wait.Go(func() {
			if f.stopNode(n, churnStopFlush) {
				times <- NodeTime{Nid: n.nid, At: time.Now().UnixMilli()}
			}
		})
	}
	wait.Wait()
	close(times)
	reply := Stopped{Nodes: make([]NodeTime, 0, len(times))}
	for t := range times {
		reply.Nodes = append(reply.Nodes, t)
	}
	return reply
}

// stopNode stops the node's agent if it runs; tells whether it did.
func (f *fleet) stopNode(n *node, flush time.Duration) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.agent == nil {
		return false
	}
	n.agent.Stop(flush)
	state := n.agent.State()
	n.state = &state
	n.delivered += n.agent.Delivered()
	n.agent, n.outbox = nil, nil
	f.mu.Lock()
	f.started--
	f.mu.Unlock()
	return true
}

// restart starts the stopped agents of nids again, one after the other.
func (f *fleet) restart(nids []string) (Restarted, error) {
	reply := Restarted{Nodes: make([]NodeTime, 0, len(nids))}
	for _, n := range f.lookup(nids) {
		at := time.Now()
		_, err := f.start(n)
		if errors.Is(err, errRunning) {
			continue
		}
		if err != nil {
			return Restarted{}, fmt.Errorf("restart: %w", err)
		}
		reply.Nodes = append(reply.Nodes, NodeTime{Nid: n.nid, At: at.UnixMilli()})
	}
	return reply, nil
}

// lookup is the nodes of nids this process holds (others are ignored, as the Node worker does).
func (f *fleet) lookup(nids []string) []*node {
	f.mu.Lock()
	defer f.mu.Unlock()
	found := make([]*node, 0, len(nids))
	for _, nid := range nids {
		if n, ok := f.byNid[nid]; ok {
			found = append(found, n)
		}
	}
	return found
}

// watchHellos notes when each running agent (of the command's nids, else all) gets its next
// Hello answered (it reconnected and resynced), until all have or the timeout passes.
func (f *fleet) watchHellos(ctx context.Context, command WatchHellos) (Hellos, error) {
	candidates := f.snapshot()
	if command.Nids != nil {
		candidates = f.lookup(*command.Nids)
	}
	type watched struct {
		nid      string
		agent    *agent.Agent
		baseline int64
	}
	var watching []watched
	for _, n := range candidates {
		if a := n.running(); a != nil {
			watching = append(watching, watched{nid: n.nid, agent: a, baseline: a.HellosAnswered()})
		}
	}
	reply := Hellos{Nodes: make([]NodeTime, 0, len(watching)), Watched: len(watching)}
	seen := make([]bool, len(watching))
	deadline := time.Now().Add(time.Duration(command.TimeoutMs) * time.Millisecond)
	for len(reply.Nodes) < len(watching) && time.Now().Before(deadline) {
		if err := sleepUntil(ctx, time.Now().Add(100*time.Millisecond)); err != nil {
			return Hellos{}, fmt.Errorf("watch-hellos: %w", err)
		}
		now := time.Now().UnixMilli()
		for i, w := range watching {
			if !seen[i] && w.agent.HellosAnswered() > w.baseline {
				seen[i] = true
				reply.Nodes = append(reply.Nodes, NodeTime{Nid: w.nid, At: now})
			}
		}
	}
	return reply, nil
}

// progress counts the fleet now.
func (f *fleet) progress() Progress {
	nodes := f.snapshot()
	f.mu.Lock()
	p := Progress{Enrolled: int(f.enrolled.Load()), Started: f.started}
	f.mu.Unlock()
	for _, n := range nodes {
		n.mu.Lock()
		p.Delivered += n.delivered
		if n.agent != nil {
			if n.agent.Connected() {
				p.Connected++
			}
			p.Backlog += n.outbox.Stats().Records
			p.Delivered += n.agent.Delivered()
		}
		n.mu.Unlock()
	}
	return p
}

// stopAll stops every agent at once, within shutdownBound.
func (f *fleet) stopAll() {
	done := make(chan struct{})
	go func() {
		var wait sync.WaitGroup
		for _, n := range f.snapshot() {
			wait.Go(func() { f.stopNode(n, shutdownFlush) })
		}
		wait.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(shutdownBound):
		f.options.Logger.Warn("agents still stopping after the bound", "bound", shutdownBound.String())
	}
}

func sleepUntil(ctx context.Context, due time.Time) error {
	wait := time.Until(due)
	if wait <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
