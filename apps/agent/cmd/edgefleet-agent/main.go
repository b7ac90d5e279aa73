// Command edgefleet-agent is the native edge agent: the same config file, CLI and state dir as
// the reference agent (packages/agent-sdk), protocol v1, one static binary.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/agent"
	"github.com/edgefleet/edgefleet/apps/agent/backoff"
	"github.com/edgefleet/edgefleet/apps/agent/config"
	"github.com/edgefleet/edgefleet/apps/agent/enroll"
	"github.com/edgefleet/edgefleet/apps/agent/hollow"
	"github.com/edgefleet/edgefleet/apps/agent/hollow/control"
	"github.com/edgefleet/edgefleet/apps/agent/metrics"
	"github.com/edgefleet/edgefleet/apps/agent/outbox"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
	"github.com/edgefleet/edgefleet/apps/agent/runtime"
)

// version is stamped at build time (-ldflags "-X main.version=…"); reported in Hello and enrollment.
var version = "0.1.0"

const usage = `usage:
  edgefleet-agent enroll --config <file>     exchange the enrollment token for node credentials
  edgefleet-agent run --config <file>        enroll if needed, then run the agent
  edgefleet-agent hollow --count N --token T --url nats://… [--enroll-url nats://…]
                         [--enroll-creds <file>] [--name-prefix hollow] [--label k=v]…
                         [--enroll-concurrency 64]
                                             N simulated agents in this process (load tests)
  edgefleet-agent hollow --control stdio     simulated agents driven by a benchmark: JSON lines
                                             on stdin/stdout (hollow/control)
  edgefleet-agent version                    print the version`

type usageError struct{ message string }

func (e *usageError) Error() string { return e.message }

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	var usageErr *usageError
	var configErr *config.Error
	var rejected *enroll.RejectedError
	switch {
	case err == nil:
		os.Exit(0)
	case errors.As(err, &usageErr):
		fmt.Fprintf(os.Stderr, "edgefleet-agent: %s\n%s\n", err, usage)
		os.Exit(2)
	case errors.As(err, &configErr), errors.As(err, &rejected):
		fmt.Fprintf(os.Stderr, "edgefleet-agent: %s\n", err)
		os.Exit(1)
	default:
		fmt.Fprintf(os.Stderr, "edgefleet-agent: %s\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return &usageError{"no command"}
	}
	command := args[0]
	if command == "version" || command == "--version" {
		fmt.Fprintln(stdout, version)
		return nil
	}
	if command == "hollow" {
		return runHollow(args[1:], os.Stdin, stdout, stderr)
	}
	if command != "enroll" && command != "run" {
		return &usageError{"unknown command " + command}
	}
	flags := flag.NewFlagSet(command, flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	configPath := flags.String("config", "", "agent config file (YAML)")
	if err := flags.Parse(args[1:]); err != nil {
		return &usageError{err.Error()}
	}
	if *configPath == "" {
		return &usageError{"--config <file> is required"}
	}
	cfg, err := config.Load(*configPath)
	if err != nil {
		return err
	}
	// JSON lines on stderr (stdout stays free for command output), like the reference agent.
	logger := slog.New(slog.NewJSONHandler(stderr, nil)).With("component", "edgefleet-agent")
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	identity, err := enrollFromConfig(ctx, cfg, logger)
	if err != nil {
		return err
	}
	if command == "enroll" {
		out, _ := json.Marshal(map[string]string{"nid": identity.Nid, "wid": identity.Wid, "org": identity.Org})
		fmt.Fprintln(stdout, string(out))
		return nil
	}
	return runAgent(ctx, cfg, identity, logger)
}

func enrollFromConfig(ctx context.Context, cfg config.Config, logger *slog.Logger) (enroll.Identity, error) {
	if identity, ok, err := enroll.Load(cfg.StateDir); err != nil || ok {
		return identity, err
	}
	if cfg.Enroll.Token == "" {
		return enroll.Identity{}, &config.Error{Message: fmt.Sprintf("not enrolled yet (no %s) and no enroll.token in the config", enroll.CredsPath(cfg.StateDir))}
	}
	return enroll.Enroll(ctx, enroll.Options{
		Token: cfg.Enroll.Token, Name: cfg.Enroll.Name, Labels: cfg.Enroll.Labels,
		Servers: cfg.EnrollServers(), CredsFile: cfg.Enroll.CredsFile, StateDir: cfg.StateDir,
		AgentVersion: version, OS: goruntime.GOOS, Arch: nodeArch(), Logger: logger,
	})
}

func runAgent(ctx context.Context, cfg config.Config, identity enroll.Identity, logger *slog.Logger) error {
	apps := runtime.New(runtime.Options{AppsDir: filepath.Join(cfg.StateDir, "apps"), Logger: logger})
	box, err := outbox.Open(outbox.Options{
		Dir: filepath.Join(cfg.StateDir, "outbox"), MaxBytes: cfg.Buffer.MaxBytes,
		OnEvict: func(count int, recordType string) {
			logger.Warn("outbox full, evicted oldest records", "count", count, "type", recordType)
		},
	})
	if err != nil {
		return err
	}
	running, err := agent.Start(agent.Options{
		Servers:     cfg.Servers,
		Credentials: agent.Credentials{JWT: identity.JWT, Seed: identity.Seed},
		// Re-issued credentials (a site move, or the first Hello after subject layout 2) replace
		// node.creds before the agent connects with them.
		SaveCredentials: func(jwt string) error {
			renewed := identity
			renewed.JWT = jwt
			return enroll.Save(cfg.StateDir, renewed)
		},
		Runtime: apps, Outbox: box, StatePath: filepath.Join(cfg.StateDir, "state.json"),
		HostSampler: metrics.NewHostSampler(cfg.StateDir),
		Heartbeat:   cfg.Intervals.Heartbeat, Metrics: cfg.Intervals.Metrics, StatusRefresh: cfg.Intervals.StatusRefresh,
		Reconnect:    backoff.Policy{Base: cfg.Reconnect.Base, Max: cfg.Reconnect.Max},
		AgentVersion: version, OS: goruntime.GOOS, Arch: nodeArch(),
		Name: "edgefleet-agent " + cfg.Enroll.Name, Logger: logger,
		Settings: protocol.StringMap{
			{Key: "stateDir", Value: cfg.StateDir},
			{Key: "name", Value: cfg.Enroll.Name},
			{Key: "bufferMaxBytes", Value: fmt.Sprint(cfg.Buffer.MaxBytes)},
			{Key: "reconnect", Value: fmt.Sprintf("%s-%s", cfg.Reconnect.Base, cfg.Reconnect.Max)},
		},
	})
	if err != nil {
		return err
	}
	logger.Info("agent running", "wid", identity.Wid, "pid", os.Getpid(), "version", version)
	<-ctx.Done()
	logger.Info("shutting down")
	running.Stop(5 * time.Second)
	logger.Info("stopped")
	return nil
}

// nodeArch names the architecture as the reference agent does (Node's os.arch()), so the console
// groups nodes the same whichever agent they run.
func nodeArch() string {
	switch goruntime.GOARCH {
	case "amd64":
		return "x64"
	case "386":
		return "ia32"
	}
	return goruntime.GOARCH
}

// repeated collects a flag given several times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// runHollow runs N simulated agents speaking the real protocol (load tests), or, with --control
// stdio, as many as a benchmark driver enrolls on stdin.
func runHollow(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("hollow", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	count := flags.Int("count", 0, "agents")
	token := flags.String("token", "", "enrollment token")
	enrollCreds := flags.String("enroll-creds", "", "public enrollment credentials")
	prefix := flags.String("name-prefix", "hollow", "node name prefix")
	concurrency := flags.Int("enroll-concurrency", 64, "enrollments in flight")
	var urls, enrollURLs, labels repeated
	flags.Var(&urls, "url", "server URL (repeatable)")
	flags.Var(&enrollURLs, "enroll-url", "enrollment server URL (repeatable)")
	flags.Var(&labels, "label", "k=v (repeatable)")
	controlled := flags.String("control", "", "stdio: driven by a benchmark (JSON lines)")
	if err := flags.Parse(args); err != nil {
		return &usageError{err.Error()}
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil)).With("component", "edgefleet-agent")
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	switch *controlled {
	case "":
	case "stdio":
		// stdout carries the protocol only; logs go to stderr, warnings up (thousands of agents
		// each saying "connected" would cost the generator more than its agents).
		quiet := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("component", "edgefleet-agent")
		return control.Serve(ctx, stdin, stdout, control.Options{
			AgentVersion: version, OS: goruntime.GOOS, Arch: nodeArch(), Logger: quiet,
		})
	default:
		return &usageError{"--control " + *controlled + ": the only control channel is stdio"}
	}
	switch {
	case *count < 1:
		return &usageError{"--count must be a positive integer"}
	case *token == "":
		return &usageError{"--token is required"}
	case len(urls) == 0:
		return &usageError{"--url is required"}
	}
	var labelMap protocol.StringMap
	for _, label := range labels {
		key, value, ok := strings.Cut(label, "=")
		if !ok || key == "" {
			return &usageError{"--label " + label + ": want key=value"}
		}
		labelMap = append(labelMap, protocol.KV{Key: key, Value: value})
	}
	fleet, err := hollow.Start(ctx, hollow.Options{
		Count: *count, Token: *token, Servers: urls, EnrollServers: enrollURLs, EnrollCredsFile: *enrollCreds,
		NamePrefix: *prefix, Labels: labelMap, EnrollConcurrency: *concurrency,
		AgentVersion: version, OS: goruntime.GOOS, Arch: nodeArch(),
		OnProgress: func(enrolled, started int) {
			logger.Info("hollow fleet progress", "enrolled", enrolled, "started", started)
		},
	})
	if err != nil {
		return err
	}
	logger.Info("hollow fleet running", "count", *count, "enrollMs", fleet.EnrollTime.Milliseconds())
	ticker := time.NewTicker(30 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			logger.Info("shutting down")
			fleet.Stop()
			return nil
		case <-ticker.C:
			var memory goruntime.MemStats
			goruntime.ReadMemStats(&memory)
			logger.Info("hollow fleet", "connected", fleet.Connected(), "heapBytes", memory.HeapInuse)
		}
	}
}
