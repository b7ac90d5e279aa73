// Package config reads the agent's YAML config: the same file and rules as the reference agent
// (packages/agent-sdk/src/config.ts), so a node can switch agents without touching it.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// Config is a validated agent config; relative paths are already absolute.
type Config struct {
	StateDir  string
	Servers   []string
	Enroll    Enroll
	Intervals Intervals
	Buffer    Buffer
	Reconnect Reconnect
}

// Enroll says how to get node credentials.
type Enroll struct {
	// Where `ef.enroll` is answered; default: Servers.
	Servers []string
	// Public enrollment credentials; empty only for a dev server without auth.
	CredsFile string
	Token     string
	// Default: the hostname.
	Name   string
	Labels protocol.StringMap
}

// Intervals apply until the control plane's HelloReply says otherwise.
type Intervals struct {
	Heartbeat     time.Duration
	Metrics       time.Duration
	StatusRefresh time.Duration
}

// Buffer bounds the offline outbox.
type Buffer struct{ MaxBytes int64 }

// Reconnect is the full-jitter backoff between connection attempts.
type Reconnect struct{ Base, Max time.Duration }

// Error is a config that cannot be used; the message names the field.
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

type rawConfig struct {
	StateDir *string   `yaml:"stateDir"`
	Servers  *[]string `yaml:"servers"`
	Enroll   *struct {
		Servers   *[]string `yaml:"servers"`
		CredsFile *string   `yaml:"credsFile"`
		Token     *string   `yaml:"token"`
		Name      *string   `yaml:"name"`
		Labels    *rawNode  `yaml:"labels"`
	} `yaml:"enroll"`
	Intervals *struct {
		HeartbeatSeconds     *int64 `yaml:"heartbeatSeconds"`
		MetricsSeconds       *int64 `yaml:"metricsSeconds"`
		StatusRefreshSeconds *int64 `yaml:"statusRefreshSeconds"`
	} `yaml:"intervals"`
	Buffer *struct {
		MaxBytes *int64 `yaml:"maxBytes"`
	} `yaml:"buffer"`
	Reconnect *struct {
		BaseMs *int64 `yaml:"baseMs"`
		MaxMs  *int64 `yaml:"maxMs"`
	} `yaml:"reconnect"`
}

// rawNode keeps a YAML node as it is (labels: their order matters for the wire bytes).
type rawNode struct{ node *yaml.Node }

func (r *rawNode) UnmarshalYAML(node *yaml.Node) error {
	r.node = node
	return nil
}

var natsURL = regexp.MustCompile(`^(nats|tls|ws|wss)://[^\s]+$`)

// Load reads and validates the YAML config at path.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, &Error{fmt.Sprintf("cannot read config %s: %v", path, err)}
	}
	absolute, err := filepath.Abs(path)
	if err != nil {
		return Config{}, &Error{fmt.Sprintf("config path %s: %v", path, err)}
	}
	return Parse(data, filepath.Dir(absolute), path)
}

// Parse validates config text; relative paths are taken relative to baseDir.
func Parse(data []byte, baseDir, source string) (Config, error) {
	var raw rawConfig
	decoder := yaml.NewDecoder(bytes.NewReader(data))
	decoder.KnownFields(true)
	if err := decoder.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, &Error{fmt.Sprintf("invalid %s: %v", source, err)}
	}
	var problems []string
	problem := func(field, message string) { problems = append(problems, "  "+field+": "+message) }

	config := Config{
		Intervals: Intervals{Heartbeat: 30 * time.Second, Metrics: 60 * time.Second, StatusRefresh: 600 * time.Second},
		Buffer:    Buffer{MaxBytes: 8 * 1024 * 1024},
		Reconnect: Reconnect{Base: 500 * time.Millisecond, Max: 30 * time.Second},
	}
	absolute := func(path string) string {
		if filepath.IsAbs(path) {
			return path
		}
		return filepath.Join(baseDir, path)
	}
	if raw.StateDir == nil || *raw.StateDir == "" {
		problem("stateDir", "required")
	} else {
		config.StateDir = absolute(*raw.StateDir)
	}
	config.Servers = urls(raw.Servers, "servers", true, problem)
	if e := raw.Enroll; e != nil {
		config.Enroll.Servers = urls(e.Servers, "enroll.servers", false, problem)
		if e.CredsFile != nil {
			if *e.CredsFile == "" {
				problem("enroll.credsFile", "must not be empty")
			}
			config.Enroll.CredsFile = absolute(*e.CredsFile)
		}
		if e.Token != nil {
			if n := len(*e.Token); n < 1 || n > 256 {
				problem("enroll.token", "must be 1 to 256 characters")
			}
			config.Enroll.Token = *e.Token
		}
		if e.Name != nil {
			if n := len(*e.Name); n < 1 || n > 128 {
				problem("enroll.name", "must be 1 to 128 characters")
			}
			config.Enroll.Name = *e.Name
		}
		if e.Labels != nil {
			config.Enroll.Labels = labels(e.Labels.node, problem)
		}
	}
	if config.Enroll.Name == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "edge-node"
		}
		config.Enroll.Name = host
	}
	if i := raw.Intervals; i != nil {
		seconds(i.HeartbeatSeconds, "intervals.heartbeatSeconds", 1, 3600, &config.Intervals.Heartbeat, problem)
		seconds(i.MetricsSeconds, "intervals.metricsSeconds", 1, 86_400, &config.Intervals.Metrics, problem)
		seconds(i.StatusRefreshSeconds, "intervals.statusRefreshSeconds", 10, 86_400, &config.Intervals.StatusRefresh, problem)
	}
	if b := raw.Buffer; b != nil && b.MaxBytes != nil {
		if *b.MaxBytes < 1024*1024 || *b.MaxBytes > 1024*1024*1024 {
			problem("buffer.maxBytes", "must be between 1048576 and 1073741824")
		}
		config.Buffer.MaxBytes = *b.MaxBytes
	}
	if r := raw.Reconnect; r != nil {
		millis(r.BaseMs, "reconnect.baseMs", 10, 60_000, &config.Reconnect.Base, problem)
		millis(r.MaxMs, "reconnect.maxMs", 100, 600_000, &config.Reconnect.Max, problem)
	}
	if len(problems) > 0 {
		return Config{}, &Error{fmt.Sprintf("invalid %s:\n%s", source, strings.Join(problems, "\n"))}
	}
	return config, nil
}

// EnrollServers is where enrollment requests go.
func (c Config) EnrollServers() []string {
	if len(c.Enroll.Servers) > 0 {
		return c.Enroll.Servers
	}
	return c.Servers
}

func urls(list *[]string, field string, required bool, problem func(string, string)) []string {
	if list == nil {
		if required {
			problem(field, "required")
		}
		return nil
	}
	if len(*list) == 0 {
		problem(field, "must name at least one server")
	}
	for i, url := range *list {
		if !natsURL.MatchString(url) {
			problem(fmt.Sprintf("%s.%d", field, i), "must be a NATS URL such as nats://host:4222")
		}
	}
	return *list
}

func labels(node *yaml.Node, problem func(string, string)) protocol.StringMap {
	if node.Kind != yaml.MappingNode {
		problem("enroll.labels", "must be a map of label names to values")
		return nil
	}
	out := protocol.StringMap{}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, value := node.Content[i], node.Content[i+1]
		if key.Kind != yaml.ScalarNode || value.Kind != yaml.ScalarNode {
			problem("enroll.labels", "names and values must be plain strings")
			continue
		}
		if n := len(key.Value); n < 1 || n > 63 {
			problem("enroll.labels."+key.Value, "label names are 1 to 63 characters")
		}
		if len(value.Value) > 255 {
			problem("enroll.labels."+key.Value, "label values are at most 255 characters")
		}
		out = append(out, protocol.KV{Key: key.Value, Value: value.Value})
	}
	return out
}

func seconds(value *int64, field string, low, high int64, into *time.Duration, problem func(string, string)) {
	if value == nil {
		return
	}
	if *value < low || *value > high {
		problem(field, fmt.Sprintf("must be between %d and %d", low, high))
	}
	*into = time.Duration(*value) * time.Second
}

func millis(value *int64, field string, low, high int64, into *time.Duration, problem func(string, string)) {
	if value == nil {
		return
	}
	if *value < low || *value > high {
		problem(field, fmt.Sprintf("must be between %d and %d", low, high))
	}
	*into = time.Duration(*value) * time.Millisecond
}
