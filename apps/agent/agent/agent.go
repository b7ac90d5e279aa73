// Package agent is the agent core: one connection with node credentials, Hello on every
// (re)connect, desired state applied through the runtime and acknowledged, heartbeats, and
// status, metrics and acks through the on-disk outbox so nothing is lost or duplicated across
// link loss or agent restarts (agent.ts of the reference agent, same protocol).
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefleet/edgefleet/apps/agent/artifacts"
	"github.com/edgefleet/edgefleet/apps/agent/backoff"
	"github.com/edgefleet/edgefleet/apps/agent/metrics"
	"github.com/edgefleet/edgefleet/apps/agent/outbox"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// Runtime is where desired apps run (runtime.Runtime).
type Runtime interface {
	Put(app, version string, spec protocol.RunSpec, art *protocol.ArtifactRef)
	// Operate runs an operator's app command (restart, stop, start, health); the agent sets the id.
	Operate(app, command string) protocol.CommandReply
	Remove(app string)
	Instances() []protocol.InstanceStatus
	OnChange(listener func())
	SampleUsage() []protocol.AppUsage
	Shutdown()
	UseChunkSource(source artifacts.ChunkSource)
}

// Outbox buffers durable up messages until their PubAck (outbox.Outbox on disk; outbox.Memory
// for hollow agents).
type Outbox interface {
	Append(recordType string, key int64, payload []byte) error
	Peek(max int) ([]outbox.Record, error)
	Ack(index int64) error
	Stats() outbox.Stats
	Close() error
}

// HostSampler samples the host for MetricsReport.
type HostSampler interface {
	Sample() (metrics.HostSample, error)
}

// Options of an agent.
type Options struct {
	// Servers: the site's leaf node, or the hub's leaf port.
	Servers []string
	// Credentials: the node's user JWT, whose permissions name every subject the node may use
	// (protocol.AddressFromJWT), and its nkey seed.
	Credentials Credentials
	// SaveCredentials stores credentials the control plane re-issued (HelloReply.JWT,
	// CredentialsUpdate: a site move, or credentials of subject layout 1) before the agent connects
	// with them; nil keeps them in memory (hollow agents).
	SaveCredentials func(jwt string) error
	Runtime         Runtime
	Outbox          Outbox
	// StatePath is state.json; empty keeps the state in memory (hollow agents).
	StatePath string
	// State, with no StatePath, is the state to start from: a hollow agent restarted in the same
	// process (hollow/control) resumes from its last applied revision and report sequences, as a
	// real agent does from state.json. Nil: a fresh node.
	State       *State
	HostSampler HostSampler
	// Heartbeat and Metrics apply until the first HelloReply names the intervals.
	Heartbeat, Metrics time.Duration
	// StatusRefresh: a StatusReport also goes out this often without a change (default 10 min).
	StatusRefresh  time.Duration
	Reconnect      backoff.Policy
	RequestTimeout time.Duration
	// ChunkTimeout is the wait for one artifact chunk (default 10 s: 128 KiB over a slow link).
	ChunkTimeout time.Duration
	// LinkCheck is how often, at least, the agent makes sure its link is alive (default 90 s; 1.5
	// metrics intervals if longer): a PING only when nothing came in since the last check.
	LinkCheck    time.Duration
	AgentVersion string
	OS, Arch     string
	Name         string
	Logger       *slog.Logger
	// Settings are shown in diagnostics bundles (no secrets: name credentials by path).
	Settings protocol.StringMap
}

// Credentials are a node's user JWT and nkey seed.
type Credentials struct {
	JWT  string
	Seed string
}

// Stats are counters for tests and diagnostics.
type Stats struct {
	Connected bool
	// Address is what the node speaks on now (from its current credentials).
	Address protocol.Address
	// CredentialSwitches counts connections opened again with re-issued credentials.
	CredentialSwitches int64
	AppliedRevision    int64
	HeartbeatsSent     int64
	HellosAnswered     int64
	DurableDelivered   int64
	Rejected           map[protocol.Reason]int64
	Outbox             outbox.Stats
	Control            []protocol.ControlCount
}

const (
	statusDebounce = 100 * time.Millisecond
	// handshakeTimeout bounds one connection attempt's handshake (see connect).
	handshakeTimeout = 10 * time.Second
	flushBatch       = 32
	// rttEvery: a metrics report carries the round trip to the server at most this often. Four
	// minutes keeps the series within Prometheus' 5-minute lookback (no gaps in its charts).
	rttEvery = 4 * time.Minute
)

var retryPolicy = backoff.Policy{Base: time.Second, Max: 30 * time.Second}

// Agent is one running agent.
type Agent struct {
	options Options
	logger  *slog.Logger
	control controlBytes
	bootID  string

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// stateMu serializes state changes: desired state, sequences, their saving and buffering.
	stateMu       sync.Mutex
	state         State
	lastStatusKey string

	connMu    sync.Mutex
	nc        *nats.Conn
	js        jetstream.JetStream
	connected atomic.Bool
	// credentials and address are the current ones (connMu): re-issued credentials replace them.
	credentials Credentials
	address     protocol.Address
	// synced tells whether this connection's Hello was answered. Buffered reports wait for it: a
	// HelloReply may carry new credentials (a site move while offline), and reports sent on the
	// old subjects after the move would be refused by the gateway.
	synced        atomic.Bool
	newCredential chan string

	heartbeatEvery atomic.Int64
	metricsEvery   atomic.Int64
	// reportsQuiet is HelloReply.RQ: the gateway counts metrics reports as signs of life.
	reportsQuiet atomic.Bool
	// metricsAckedAt is when the hub last acknowledged a metrics report (unix ns; 0: never).
	metricsAckedAt atomic.Int64
	intervalsSet   chan struct{}
	helloSignal    chan struct{}
	flushSignal    chan struct{}
	statusTimer    *time.Timer
	statusTimerMu  sync.Mutex
	heartbeatSeq   int64
	// linkInMsgs is the connection's inbound message count at the last link check.
	linkInMsgs uint64
	// rttAt is when a metrics report last measured the round trip (reportMetrics).
	rttAt time.Time

	counters struct {
		heartbeats, hellos, delivered, switches atomic.Int64
	}
	rejectedMu sync.Mutex
	rejected   map[protocol.Reason]int64

	// recent holds the agent's own last log lines (diagnostics bundles).
	recent           *recentLog
	startedAt        time.Time
	commandsInFlight atomic.Int64
	logs             logSessions
	// chunkCounters: artifact chunks from the site cache and from the gateway.
	chunkCounters artifacts.SiteCacheCounters
}

// Start restores the state, restarts the desired apps, and connects in the background: the agent
// works offline from the start.
func Start(options Options) (*Agent, error) {
	if options.Heartbeat == 0 {
		options.Heartbeat = 30 * time.Second
	}
	if options.Metrics == 0 {
		options.Metrics = 60 * time.Second
	}
	if options.StatusRefresh == 0 {
		options.StatusRefresh = 10 * time.Minute
	}
	if options.Reconnect.Base == 0 {
		options.Reconnect = backoff.Policy{Base: 500 * time.Millisecond, Max: 30 * time.Second}
	}
	if options.RequestTimeout == 0 {
		options.RequestTimeout = 5 * time.Second
	}
	if options.ChunkTimeout == 0 {
		options.ChunkTimeout = 10 * time.Second
	}
	if options.LinkCheck == 0 {
		options.LinkCheck = 90 * time.Second
	}
	if options.Logger == nil {
		options.Logger = slog.New(slog.DiscardHandler)
	}
	address, err := protocol.AddressFromJWT(options.Credentials.JWT)
	if err != nil {
		return nil, fmt.Errorf("the node credentials name no node subjects: %w", err)
	}
	if options.Name == "" {
		options.Name = "edgefleet-agent " + address.Wid
	}
	boot := make([]byte, 6)
	_, _ = rand.Read(boot)
	recent := &recentLog{}
	a := &Agent{
		options: options, bootID: hex.EncodeToString(boot), recent: recent, startedAt: time.Now(),
		logger:       slog.New(teeHandler{inner: options.Logger.Handler(), recent: recent}),
		intervalsSet: make(chan struct{}, 1), helloSignal: make(chan struct{}, 1), flushSignal: make(chan struct{}, 1),
		rejected: map[protocol.Reason]int64{}, credentials: options.Credentials, address: address,
		newCredential: make(chan string, 1),
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.heartbeatEvery.Store(int64(options.Heartbeat))
	a.metricsEvery.Store(int64(options.Metrics))

	state := State{Desired: map[string]DesiredApp{}}
	if options.StatePath != "" {
		var recovered error
		state, recovered = LoadState(options.StatePath, time.Now())
		if recovered != nil {
			a.logger.Error("agent state recovered", "error", recovered.Error())
			a.state = state
			a.saveLocked()
		}
	} else if options.State != nil {
		state = options.State.clone()
	}
	a.state = state
	// The site's leaf cache first, the gateway for whatever it does not hold (artifacts/sitecache.go).
	options.Runtime.UseChunkSource(artifacts.SiteCacheFirst(artifacts.SiteCacheOptions{
		Get: a.siteCacheGet, Fallback: a, Counters: &a.chunkCounters,
	}))
	for app, desired := range state.Desired {
		options.Runtime.Put(app, desired.Ver, desired.Spec, desired.Art)
	}
	options.Runtime.OnChange(a.scheduleStatus)
	a.scheduleStatus()

	a.loop(a.runLoop)
	if err := a.connect(); err != nil {
		// The apps it started must not outlive an agent that could not start (no orphans).
		a.cancel()
		options.Runtime.Shutdown()
		a.wg.Wait()
		return nil, err
	}
	return a, nil
}

func (a *Agent) loop(run func()) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		run()
	}()
}

// connect makes the one connection with the current credentials; the client reconnects on its own
// (forever, full jitter). Re-issued credentials replace it with a new one (switchCredentials).
func (a *Agent) connect() error {
	a.connMu.Lock()
	credentials, address := a.credentials, a.address
	a.connMu.Unlock()
	options := []nats.Option{
		nats.UserJWTAndSeed(credentials.JWT, credentials.Seed),
		nats.Name(a.options.Name),
		nats.CustomInboxPrefix(address.InboxPrefix()),
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true),
		// The whole handshake (dial, INFO, CONNECT, first PONG) may take this long. nats.go's 2 s is
		// too short for a cellular or satellite link, and when a site's leaf restarts under load
		// its agents gave up on handshakes it was still working through, and tried again: a 20,000-node
		// run logged 6,860 "i/o timeout" reconnects in 4 minutes while the leaf's resync stalled.
		nats.Timeout(handshakeTimeout),
		nats.IgnoreAuthErrorAbort(),
		nats.CustomReconnectDelay(func(attempts int) time.Duration { return a.options.Reconnect.Delay(attempts - 1) }),
		// The agent's own link check (linkCheck) notices a dead link and pings only a silent one;
		// the client's pings, which go out whatever else flows, are only a backstop. At 30 s they
		// were two thirds of an idle node's frames at its leaf (two PINGs and PONGs a minute beside
		// a report and its PubAck).
		nats.PingInterval(10 * time.Minute),
		nats.MaxPingsOutstanding(2),
		// Nothing is queued while disconnected: heartbeats are only meaningful live, and the
		// outbox holds what must survive.
		nats.ReconnectBufSize(-1),
		nats.ConnectHandler(func(nc *nats.Conn) { a.onConnected(nc, "connected") }),
		nats.ReconnectHandler(func(nc *nats.Conn) { a.onConnected(nc, "reconnected") }),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			// A connection replaced by one with new credentials says nothing about the link.
			if a.current(nc) && a.connected.Swap(false) {
				a.synced.Store(false)
				a.logger.Warn("disconnected", "error", errorText(err))
			}
		}),
		nats.ErrorHandler(func(nc *nats.Conn, _ *nats.Subscription, err error) {
			if a.current(nc) {
				a.logger.Warn("connection error", "error", errorText(err))
			}
		}),
	}
	nc, err := nats.Connect(strings.Join(a.options.Servers, ","), options...)
	if err != nil {
		return fmt.Errorf("connect to %v: %w", a.options.Servers, err)
	}
	if err := a.attach(nc); err != nil {
		nc.Close()
		return err
	}
	// One downlink subscription for deltas, commands and credentials (docs/protocol.md "Commands").
	if _, err := nc.Subscribe(address.DownSubject(), a.onDownlink); err != nil {
		nc.Close()
		return fmt.Errorf("subscribe to desired state: %w", err)
	}
	if nc.IsConnected() {
		a.onConnected(nc, "connected")
	}
	return nil
}

// attach keeps the connection (the connect handler may run before nats.Connect returns).
func (a *Agent) attach(nc *nats.Conn) error {
	a.connMu.Lock()
	defer a.connMu.Unlock()
	if a.nc != nil {
		return nil
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	a.nc, a.js = nc, js
	return nil
}

func (a *Agent) onConnected(nc *nats.Conn, event string) {
	if err := a.attach(nc); err != nil {
		a.logger.Error("cannot use the connection", "error", err.Error())
		return
	}
	if !a.current(nc) || a.connected.Swap(true) {
		return
	}
	a.synced.Store(false)
	a.logger.Info(event, "server", nc.ConnectedUrlRedacted(), "site", a.addr().Site)
	signal(a.helloSignal)
	signal(a.flushSignal)
}

func (a *Agent) conn() *nats.Conn {
	a.connMu.Lock()
	defer a.connMu.Unlock()
	return a.nc
}

// current tells whether nc is the agent's connection (not one replaced by re-issued credentials).
func (a *Agent) current(nc *nats.Conn) bool { return a.conn() == nc }

// addr is the node's current address (its credentials' subjects).
func (a *Agent) addr() protocol.Address {
	a.connMu.Lock()
	defer a.connMu.Unlock()
	return a.address
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Stats returns a snapshot of the counters.
func (a *Agent) Stats() Stats {
	a.stateMu.Lock()
	rev := a.state.Rev
	a.stateMu.Unlock()
	a.rejectedMu.Lock()
	rejected := map[protocol.Reason]int64{}
	for reason, count := range a.rejected {
		rejected[reason] = count
	}
	a.rejectedMu.Unlock()
	return Stats{
		Connected: a.connected.Load(), Address: a.addr(), CredentialSwitches: a.counters.switches.Load(), AppliedRevision: rev, HeartbeatsSent: a.counters.heartbeats.Load(),
		HellosAnswered: a.counters.hellos.Load(), DurableDelivered: a.counters.delivered.Load(),
		Rejected: rejected, Outbox: a.options.Outbox.Stats(), Control: a.control.snapshot(),
	}
}

// Stop shuts down cleanly: stop the apps, deliver what is buffered (bounded wait), close the
// connection.
func (a *Agent) Stop(flushTimeout time.Duration) {
	a.statusTimerMu.Lock()
	if a.statusTimer != nil {
		a.statusTimer.Stop()
	}
	a.statusTimerMu.Unlock()
	a.options.Runtime.Shutdown()
	a.reportStatus(false)
	deadline := time.Now().Add(flushTimeout)
	for a.connected.Load() && a.options.Outbox.Stats().Records > 0 && time.Now().Before(deadline) {
		signal(a.flushSignal)
		time.Sleep(50 * time.Millisecond)
	}
	a.cancel()
	a.wg.Wait()
	if nc := a.conn(); nc != nil {
		// Connected: drain (what was sent gets through) for at most 2 s; offline: just close.
		if a.connected.Load() && nc.Drain() == nil {
			for until := time.Now().Add(2 * time.Second); !nc.IsClosed() && time.Now().Before(until); {
				time.Sleep(10 * time.Millisecond)
			}
		}
		nc.Close()
	}
	_ = a.options.Outbox.Close()
}

// --- desired state ---------------------------------------------------------------------------

func (a *Agent) onDelta(msg *nats.Msg) {
	a.control.received("delta", len(msg.Subject)+len(msg.Data)+framingBytes)
	delta, err := protocol.DecodeAs[protocol.DesiredDelta](msg.Data)
	if err != nil {
		a.reject(err)
		return
	}
	a.applyDelta(delta.DeltaBody)
}

// applyDelta applies a delta in order with other state changes; asks again through Hello on a gap.
func (a *Agent) applyDelta(delta protocol.DeltaBody) {
	a.stateMu.Lock()
	defer a.stateMu.Unlock()
	if delta.To <= a.state.Rev {
		return
	}
	if delta.From > a.state.Rev {
		a.logger.Warn("desired state gap, asking again", "applied", a.state.Rev, "from", delta.From)
		signal(a.helloSignal)
		return
	}
	for _, put := range delta.Put {
		a.options.Runtime.Put(put.App, put.Ver, put.Spec, put.Art)
		a.state.Desired[put.App] = DesiredApp{Ver: put.Ver, Spec: put.Spec, Art: put.Art}
	}
	for _, app := range delta.Del {
		a.options.Runtime.Remove(app)
		delete(a.state.Desired, app)
	}
	a.state.Rev = delta.To
	a.saveLocked()
	a.logger.Info("desired state applied", "rev", delta.To, "put", len(delta.Put), "del", len(delta.Del))
	a.bufferLocked(protocol.UpAck, delta.To, protocol.DesiredAck{Rev: delta.To})
}

// helloUntilAnswered says Hello, on every (re)connect and when asked to (a gap: helloSignal, see
// runLoop), until answered or the link is down.
func (a *Agent) helloUntilAnswered() {
	for attempt := 0; a.connected.Load(); attempt++ {
		if a.hello() {
			return
		}
		if !backoff.Sleep(a.ctx, retryPolicy.Delay(attempt)) {
			return
		}
	}
}

func (a *Agent) hello() bool {
	nc := a.conn()
	if nc == nil {
		return false
	}
	a.stateMu.Lock()
	rev := a.state.Rev
	a.stateMu.Unlock()
	payload, err := protocol.Encode(protocol.Hello{Av: a.options.AgentVersion, OS: a.options.OS, Arch: a.options.Arch, Boot: a.bootID, Rev: rev})
	if err != nil {
		a.logger.Error("cannot encode hello", "error", err.Error())
		return false
	}
	subject := a.addr().UpSubject(protocol.UpHello)
	a.control.sent("hello", len(subject)+len(payload)+framingBytes)
	ctx, cancel := context.WithTimeout(a.ctx, a.options.RequestTimeout)
	defer cancel()
	reply, err := nc.RequestWithContext(ctx, subject, payload)
	if err != nil {
		if a.ctx.Err() == nil {
			a.logger.Warn("hello not answered", "error", err.Error())
		}
		return false
	}
	a.control.received("hello", len(reply.Subject)+len(reply.Data)+framingBytes)
	answer, err := protocol.DecodeAs[protocol.HelloReply](reply.Data)
	if err != nil {
		a.reject(err)
		return false
	}
	a.counters.hellos.Add(1)
	a.setIntervals(time.Duration(answer.Hb)*time.Second, time.Duration(answer.Mx)*time.Second)
	a.reportsQuiet.Store(answer.RQ)
	// New credentials first: this connection's subjects are not the node's any more (the delta
	// comes with the Hello on the new ones).
	if answer.JWT != "" && a.useCredentials(answer.JWT, "hello") {
		return true
	}
	if answer.D != nil {
		a.applyDelta(*answer.D)
	}
	a.synced.Store(true)
	signal(a.flushSignal)
	return true
}

// --- credentials -----------------------------------------------------------------------------

func (a *Agent) onCredentialsUpdate(msg *nats.Msg) {
	update, err := protocol.DecodeAs[protocol.CredentialsUpdate](msg.Data)
	if err != nil {
		a.reject(err)
		return
	}
	a.useCredentials(update.JWT, "downlink")
}

// useCredentials takes re-issued credentials (docs/protocol.md "Credentials"): stored first; when
// they name other subjects (another site, or layout 2 after layout 1), the connection is replaced
// by one made with them (switchCredentials), whose Hello resyncs, and buffered reports go out on the
// new subjects after it. True when the agent switches.
func (a *Agent) useCredentials(jwt, via string) bool {
	address, err := protocol.AddressFromJWT(jwt)
	current := a.addr()
	if err != nil || address.Wid != current.Wid {
		a.logger.Warn("ignoring credentials that do not name this node", "via", via)
		return false
	}
	if a.options.SaveCredentials != nil {
		if err := a.options.SaveCredentials(jwt); err != nil {
			a.logger.Error("cannot store re-issued credentials", "error", err.Error())
			return false
		}
	}
	a.connMu.Lock()
	a.credentials.JWT = jwt
	a.connMu.Unlock()
	if address == current {
		return false
	}
	a.logger.Info("switching to re-issued credentials", "via", via, "from", current.Site, "to", address.Site)
	a.connMu.Lock()
	a.address = address
	a.connMu.Unlock()
	a.synced.Store(false)
	select {
	case a.newCredential <- jwt:
	default:
	}
	return true
}

// switchCredentials replaces the connection when the credentials name new subjects (newCredential,
// see runLoop): the old one is closed (its subscriptions and inbox are the old subjects'), a new one
// made at once.
func (a *Agent) switchCredentials() {
	// Closed while still the agent's connection (a closed one never reconnects, so none of its
	// handlers can attach it again), then forgotten: the next one attaches.
	if old := a.conn(); old != nil {
		old.Close()
	}
	a.connMu.Lock()
	a.nc, a.js = nil, nil
	a.connMu.Unlock()
	a.connected.Store(false)
	a.synced.Store(false)
	a.counters.switches.Add(1)
	// A fresh snapshot on the new subjects: one sent on the old ones after a move may be refused.
	a.reportStatus(true)
	for attempt := 0; a.ctx.Err() == nil; attempt++ {
		err := a.connect()
		if err == nil {
			return
		}
		a.logger.Warn("cannot connect with re-issued credentials", "error", err.Error())
		if !backoff.Sleep(a.ctx, a.options.Reconnect.Delay(attempt)) {
			return
		}
	}
}

func (a *Agent) setIntervals(heartbeat, metrics time.Duration) {
	changed := a.heartbeatEvery.Swap(int64(heartbeat)) != int64(heartbeat)
	changed = a.metricsEvery.Swap(int64(metrics)) != int64(metrics) || changed
	if changed {
		signal(a.intervalsSet)
	}
}

// --- artifacts -------------------------------------------------------------------------------

// Chunk asks the gateway for artifact bytes on the node's own `ef.up.<site>.<wid>.art`; the reply comes
// on the connection's inbox, the one subscription Hello already uses.
func (a *Agent) Chunk(ctx context.Context, obj string, offset, length int64) (artifacts.ChunkAnswer, error) {
	nc := a.conn()
	if nc == nil || !a.connected.Load() {
		return artifacts.ChunkAnswer{}, errors.New("not connected")
	}
	payload, err := protocol.Encode(protocol.ArtifactChunkRequest{Obj: obj, Off: offset, Len: length})
	if err != nil {
		return artifacts.ChunkAnswer{}, &artifacts.Error{Code: "bad_reply", Message: err.Error()}
	}
	subject := a.addr().UpSubject(protocol.UpArt)
	a.control.sent("art", len(subject)+len(payload)+framingBytes)
	ctx, cancel := context.WithTimeout(ctx, a.options.ChunkTimeout)
	defer cancel()
	reply, err := nc.RequestWithContext(ctx, subject, payload)
	if err != nil {
		return artifacts.ChunkAnswer{}, fmt.Errorf("chunk request: %w", err)
	}
	a.control.received("art", len(reply.Subject)+len(reply.Data)+framingBytes)
	answer, err := protocol.DecodeAs[protocol.ArtifactChunkReply](reply.Data)
	if err != nil {
		a.reject(err)
		return artifacts.ChunkAnswer{}, fmt.Errorf("bad chunk reply: %w", err)
	}
	if answer.Err != "" {
		why := ""
		if answer.Why != nil {
			why = *answer.Why
		}
		return artifacts.ChunkAnswer{Err: answer.Err, Why: why}, nil
	}
	if *answer.Off != offset {
		return artifacts.ChunkAnswer{}, fmt.Errorf("chunk reply for offset %d, asked %d", *answer.Off, offset)
	}
	return artifacts.ChunkAnswer{Size: *answer.Size, Data: answer.Data}, nil
}

// siteCacheGet is one JetStream direct get on the node's own leaf (the one JetStream subject its
// credentials may publish); the reply comes on the connection's inbox like any other.
func (a *Agent) siteCacheGet(ctx context.Context, subject string, payload []byte) (artifacts.SiteCacheReply, error) {
	nc := a.conn()
	if nc == nil || !a.connected.Load() {
		return artifacts.SiteCacheReply{}, artifacts.ErrNotConnected
	}
	a.control.sent("art", len(subject)+len(payload)+framingBytes)
	reply, err := nc.RequestWithContext(ctx, subject, payload)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
		return artifacts.SiteCacheReply{}, fmt.Errorf("%w: %v", artifacts.ErrSiteCacheTimeout, err)
	}
	if err != nil {
		return artifacts.SiteCacheReply{}, fmt.Errorf("site cache direct get: %w", err)
	}
	a.control.received("art", len(reply.Subject)+len(reply.Data)+framingBytes)
	answer := artifacts.SiteCacheReply{Data: reply.Data}
	if status := reply.Header.Get("Status"); status != "" {
		code, err := strconv.Atoi(status)
		if err != nil {
			return artifacts.SiteCacheReply{}, fmt.Errorf("site cache direct get: status %q", status)
		}
		answer.Status = code
	}
	if sizes, ok := reply.Header[protocol.SiteCacheSizeHeader]; ok && len(sizes) > 0 {
		answer.Size, answer.HasSize = sizes[0], true
	}
	return answer, nil
}

// --- up messages -----------------------------------------------------------------------------

// runLoop is the agent's one long-lived goroutine of its own (a generator holds 100,000 hollow
// agents: each goroutine is stack per agent). One timer serves the heartbeat, the metrics and the
// status refresh (schedule: the first heartbeat and metrics tick at a random point of the interval,
// again after a HelloReply changed the intervals). The work that blocks on the network — Hello
// until answered, the flush of buffered reports, the switch to re-issued credentials, a metrics
// report (its RTT) — runs on a goroutine that lives as long as that work, started on its signal,
// at most one of each kind at a time: each had a loop of its own waiting for the same signal before,
// and a signal that comes while its work runs waits (the channels hold one) until it ended, as then.
// A flush that failed is retried after a backoff (the retry timer), or at once on the next signal.
func (a *Agent) runLoop() {
	status := func() { a.reportStatus(true) }
	plan := newSchedule(time.Now(), mathrand.Float64,
		&periodicTask{name: "heartbeat", interval: a.heartbeatInterval, jittered: true, run: a.heartbeat, quietUntil: a.heartbeatQuietUntil},
		&periodicTask{name: "metrics", interval: a.metricsInterval, jittered: true, async: true, run: a.reportMetrics},
		&periodicTask{name: "status", interval: func() time.Duration { return a.options.StatusRefresh }, run: status},
		&periodicTask{name: "link", interval: a.linkCheckInterval, jittered: true, async: true, run: a.linkCheck},
	)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	// What the loop does when a job ended. Each kind of job runs at most once at a time, so the
	// buffer holds every end that can be pending: a job that ends after the loop returned never
	// blocks (Stop waits for it).
	ended := make(chan func(), 4)
	start := func(job func() func()) {
		a.loop(func() { ended <- job() })
	}
	var (
		flushing, helloing, switching bool
		failures                      int
		retryFlush                    time.Time // zero: none
	)
	for {
		wake, planned := plan.next()
		if !retryFlush.IsZero() && (!planned || retryFlush.Before(wake)) {
			wake, planned = retryFlush, true
		}
		if planned {
			timer.Reset(time.Until(wake))
		} else {
			timer.Stop()
		}
		// A nil channel is never ready: no second job of a kind while one runs.
		var flushSignal, helloSignal <-chan struct{}
		var newCredential <-chan string
		if !flushing {
			flushSignal = a.flushSignal
		}
		if !helloing {
			helloSignal = a.helloSignal
		}
		if !switching {
			newCredential = a.newCredential
		}
		select {
		case <-a.ctx.Done():
			return
		case <-a.intervalsSet:
			plan.intervalsChanged(time.Now())
		case <-timer.C:
		case <-flushSignal:
			flushing = true
			start(func() func() {
				delivered := a.flush()
				return func() {
					flushing = false
					if delivered {
						failures = 0
						return
					}
					failures++
					if at := time.Now().Add(retryPolicy.Delay(failures - 1)); retryFlush.IsZero() || at.Before(retryFlush) {
						retryFlush = at
					}
				}
			})
		case <-helloSignal:
			helloing = true
			start(func() func() {
				a.helloUntilAnswered()
				return func() { helloing = false }
			})
		case <-newCredential:
			switching = true
			start(func() func() {
				a.switchCredentials()
				return func() { switching = false }
			})
		case end := <-ended:
			end()
		}
		now := time.Now()
		if !retryFlush.IsZero() && !now.Before(retryFlush) {
			retryFlush = time.Time{}
			signal(a.flushSignal)
		}
		for _, task := range plan.take(now) {
			if task.async {
				start(func() func() {
					task.run()
					return func() { plan.finished(task, time.Now()) }
				})
				continue
			}
			task.run()
			plan.finished(task, time.Now())
		}
	}
}

func (a *Agent) heartbeatInterval() time.Duration { return time.Duration(a.heartbeatEvery.Load()) }
func (a *Agent) metricsInterval() time.Duration   { return time.Duration(a.metricsEvery.Load()) }

// heartbeatQuietUntil is until when no heartbeat is needed. With HelloReply.RQ the gateway counts
// each metrics report the hub stored as a sign of life, so a heartbeat goes out only after an
// interval (and a twentieth, so a report on the same period wins the race) without an
// acknowledged report: an idle fleet sends its metrics and nothing else (docs/protocol.md).
func (a *Agent) heartbeatQuietUntil() time.Time {
	acked := a.metricsAckedAt.Load()
	if !a.reportsQuiet.Load() || acked == 0 {
		return time.Time{}
	}
	every := a.heartbeatInterval()
	return time.Unix(0, acked).Add(every + every/20)
}

// heartbeat is a core publish, only while connected: a missed heartbeat is the signal.
func (a *Agent) heartbeat() {
	nc := a.conn()
	if nc == nil || !a.connected.Load() {
		return
	}
	payload, err := protocol.Encode(protocol.Heartbeat{S: a.heartbeatSeq})
	if err != nil {
		a.logger.Error("cannot encode heartbeat", "error", err.Error())
		return
	}
	a.heartbeatSeq++
	subject := a.addr().UpSubject(protocol.UpHb)
	if err := nc.Publish(subject, payload); err != nil {
		a.logger.Warn("heartbeat not sent", "error", err.Error())
		return
	}
	a.counters.heartbeats.Add(1)
	a.control.sent("hb", len(subject)+len(payload)+framingBytes)
}

// linkCheckInterval is LinkCheck, or one and a half metrics intervals if longer: an acknowledged
// report then falls within every check.
func (a *Agent) linkCheckInterval() time.Duration {
	return max(a.options.LinkCheck, a.metricsInterval()*3/2)
}

// linkCheck replaces a connection that went silent without closing (a NAT that dropped its state,
// a dead cellular bearer): the TCP socket stays open and nothing would tell the client. A message
// received since the last check (a PubAck, a delta, a Hello reply) proves the link, so an agent
// whose reports are acknowledged never pings; a silent one pings once and reconnects when no PONG
// comes back within a third of the check interval. The leaf pings the agent in the same way from its side
// (ping_interval), so either end notices within about two checks.
func (a *Agent) linkCheck() {
	nc := a.conn()
	if nc == nil || !a.connected.Load() {
		return
	}
	in := nc.Stats().InMsgs
	if in != a.linkInMsgs {
		a.linkInMsgs = in
		return
	}
	// A slow PONG is not a dead link: with the machine overloaded (a 100,000-node connect on 2
	// cores) leaves took over 5 s, and reconnecting then made thousands of handshakes more. A third
	// of the check interval (30 s by default) is patient; a dead link is still gone within two checks.
	wait := max(a.options.RequestTimeout, a.linkCheckInterval()/3)
	if err := nc.FlushTimeout(wait); err != nil && a.current(nc) && a.connected.Load() && a.ctx.Err() == nil {
		a.logger.Warn("the link is silent; reconnecting", "error", err.Error())
		if err := nc.ForceReconnect(); err != nil {
			a.logger.Warn("cannot reconnect", "error", err.Error())
		}
	}
}

func (a *Agent) reportMetrics() {
	host, err := a.options.HostSampler.Sample()
	if err != nil {
		a.logger.Warn("host sample incomplete", "error", err.Error())
	}
	apps := a.options.Runtime.SampleUsage()
	if len(apps) > 64 {
		apps = apps[:64]
	}
	// The round trip to the server is a PING and PONG of its own: timed every rttEvery only, not at
	// every report, so an idle node's leaf handles its report and PubAck and nothing else.
	var rtt *int64
	if nc := a.conn(); nc != nil && a.connected.Load() && time.Since(a.rttAt) >= rttEvery {
		if measured, err := nc.RTT(); err == nil {
			micros := max(1, measured.Microseconds())
			rtt = &micros
			a.rttAt = time.Now()
		}
	}
	a.stateMu.Lock()
	defer a.stateMu.Unlock()
	a.state.Seq.Mx++
	seq := a.state.Seq.Mx
	// The sequence is saved before the report is buffered: a crash can skip one, never reuse it.
	a.saveLocked()
	net := host.Net
	if net == nil {
		net = []protocol.NetInterface{}
	}
	a.bufferLocked(protocol.UpMx, seq, protocol.MetricsReport{
		Seq: seq, At: time.Now().UnixMilli(), CPU: host.CPU, Mu: host.Mu, Mt: host.Mt, Du: host.Du, Dt: host.Dt,
		RTT: rtt, Net: net, Apps: apps, Ctl: a.control.snapshot(),
	})
}

// scheduleStatus debounces: a burst of transitions (several apps starting) becomes one report.
func (a *Agent) scheduleStatus() {
	a.statusTimerMu.Lock()
	defer a.statusTimerMu.Unlock()
	if a.ctx.Err() != nil {
		return
	}
	if a.statusTimer != nil {
		a.statusTimer.Stop()
	}
	a.statusTimer = time.AfterFunc(statusDebounce, func() { a.reportStatus(false) })
}

func (a *Agent) reportStatus(force bool) {
	a.stateMu.Lock()
	defer a.stateMu.Unlock()
	instances := a.options.Runtime.Instances()
	key := fmt.Sprintf("%v", instanceKeys(instances))
	if !force && key == a.lastStatusKey {
		return
	}
	a.lastStatusKey = key
	a.state.Seq.St++
	seq := a.state.Seq.St
	a.saveLocked()
	a.bufferLocked(protocol.UpSt, seq, protocol.StatusReport{Seq: seq, At: time.Now().UnixMilli(), Inst: instances})
}

func instanceKeys(instances []protocol.InstanceStatus) []string {
	keys := make([]string, len(instances))
	for i, s := range instances {
		why, pb, pt := "", "", ""
		if s.Why != nil {
			why = "+" + *s.Why
		}
		if s.Pb != nil {
			pb = fmt.Sprint(*s.Pb)
		}
		if s.Pt != nil {
			pt = fmt.Sprint(*s.Pt)
		}
		keys[i] = strings.Join([]string{s.App, s.Ver, s.St, why, fmt.Sprint(s.Rs), s.Tgt, pb, pt}, "\x00")
	}
	return keys
}

// saveLocked saves the state (stateMu held); a failure is logged, the agent keeps running.
func (a *Agent) saveLocked() {
	if a.options.StatePath == "" {
		return
	}
	if err := SaveState(a.options.StatePath, a.state); err != nil {
		a.logger.Error("cannot save agent state", "error", err.Error())
	}
}

// bufferLocked encodes a durable message into the outbox (stateMu held) and wakes the flusher.
// A message that cannot be buffered (a full disk) is logged and lost, the agent keeps running;
// what was buffered before stays.
func (a *Agent) bufferLocked(upType string, key int64, msg protocol.Message) {
	payload, err := protocol.Encode(msg)
	if err != nil {
		a.logger.Error("cannot encode report", "type", upType, "error", err.Error())
		return
	}
	if err := a.options.Outbox.Append(upType, key, payload); err != nil {
		a.logger.Error("cannot buffer report", "type", upType, "key", key, "error", err.Error())
		return
	}
	signal(a.flushSignal)
}

// flush delivers until the outbox is empty or a publish fails (false); only once the connection's
// Hello is answered (see synced).
func (a *Agent) flush() bool {
	for a.connected.Load() && a.synced.Load() && a.ctx.Err() == nil {
		batch, err := a.options.Outbox.Peek(flushBatch)
		if err != nil {
			a.logger.Error("cannot read the outbox", "error", err.Error())
			return false
		}
		if len(batch) == 0 {
			return true
		}
		a.connMu.Lock()
		js := a.js
		a.connMu.Unlock()
		if js == nil {
			return true // replaced by a connection with new credentials: its Hello kicks the flush
		}
		for _, record := range batch {
			if !a.connected.Load() || !a.synced.Load() {
				return true // the reconnect kicks the flush again
			}
			subject := a.addr().UpSubject(record.Type)
			// No Nats-Msg-Id: EF_UP is one stream for every tenant, so a header the node chooses
			// would let a node make another's report a "duplicate". The inventory is idempotent on
			// the report's own sequence instead (docs/protocol.md).
			ctx, cancel := context.WithTimeout(a.ctx, a.options.RequestTimeout)
			_, err := js.Publish(ctx, subject, record.Payload, jetstream.WithRetryAttempts(0))
			cancel()
			if err != nil {
				if a.ctx.Err() == nil {
					a.logger.Warn("buffered report not delivered yet", "type", record.Type, "key", record.Key, "error", err.Error())
				}
				return false
			}
			if record.Type == protocol.UpMx {
				a.metricsAckedAt.Store(time.Now().UnixNano())
			}
			// Subject, reply inbox and framing up; the PubAck (~60 bytes) down.
			a.control.sent(record.Type, len(subject)+len(record.Payload)+40+framingBytes)
			a.control.received(record.Type, 60+framingBytes)
			if err := a.options.Outbox.Ack(record.Index); err != nil {
				a.logger.Error("cannot mark a report delivered", "error", err.Error())
				return false
			}
			a.counters.delivered.Add(1)
		}
	}
	return true
}

// --- helpers ---------------------------------------------------------------------------------

func (a *Agent) reject(err error) {
	var refused *protocol.DecodeError
	if !errors.As(err, &refused) {
		a.logger.Warn("rejected message", "error", err.Error())
		return
	}
	a.rejectedMu.Lock()
	a.rejected[refused.Reason]++
	a.rejectedMu.Unlock()
	a.logger.Warn("rejected message", "type", string(refused.Type), "reason", string(refused.Reason), "detail", refused.Detail)
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Connected tells whether the agent holds a connection now (cheap: for fleets of hollow agents).
func (a *Agent) Connected() bool { return a.connected.Load() }

// HellosAnswered counts the Hellos answered since the start (cheap, unlike Stats: a generator
// polls thousands of agents to time their resync after a server restart).
func (a *Agent) HellosAnswered() int64 { return a.counters.hellos.Load() }

// Delivered counts the durable reports whose PubAck arrived since the start (cheap, unlike Stats).
func (a *Agent) Delivered() int64 { return a.counters.delivered.Load() }

// State is a copy of the agent's state now: applied revision, report sequences, desired apps
// (Options.State of the next start of a hollow agent).
func (a *Agent) State() State {
	a.stateMu.Lock()
	defer a.stateMu.Unlock()
	return a.state.clone()
}
