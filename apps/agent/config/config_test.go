package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParsesTheReferenceAgentsConfig(t *testing.T) {
	// The README's example (packages/agent-sdk/README.md), unchanged.
	text := `
stateDir: state # relative to the config file
servers: ["nats://leaf.site.local:4222"]
enroll:
  token: efe_abc
  credsFile: enroll.creds
  name: toll-station-17
  labels: { site: a7-north, role: gate }
intervals: { heartbeatSeconds: 30, metricsSeconds: 60, statusRefreshSeconds: 600 }
buffer: { maxBytes: 8388608 }
reconnect: { baseMs: 500, maxMs: 30000 }
`
	config, err := Parse([]byte(text), "/etc/edgefleet", "agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if config.StateDir != "/etc/edgefleet/state" || config.Enroll.CredsFile != "/etc/edgefleet/enroll.creds" {
		t.Fatalf("paths not made absolute: %+v", config)
	}
	if got := config.Enroll.Labels; len(got) != 2 || got[0].Key != "site" || got[1].Value != "gate" {
		t.Fatalf("labels (in order): %+v", got)
	}
	if config.Reconnect.Base != 500*time.Millisecond || config.Intervals.Metrics != time.Minute {
		t.Fatalf("durations: %+v", config)
	}
	if got := config.EnrollServers(); len(got) != 1 || got[0] != "nats://leaf.site.local:4222" {
		t.Fatalf("enroll servers default to servers: %v", got)
	}
}

func TestDefaults(t *testing.T) {
	config, err := Parse([]byte("stateDir: /s\nservers: [\"nats://h:4222\"]\n"), "/", "c")
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if config.Enroll.Name != host || config.Buffer.MaxBytes != 8<<20 || config.Intervals.Heartbeat != 30*time.Second ||
		config.Intervals.StatusRefresh != 10*time.Minute || config.Reconnect.Max != 30*time.Second {
		t.Fatalf("defaults: %+v", config)
	}
}

func TestRefusesBadConfigNamingTheField(t *testing.T) {
	cases := map[string]string{
		"stateDir: /s\n":                                                              "servers: required",
		"servers: [\"nats://h\"]\n":                                                   "stateDir: required",
		"stateDir: /s\nservers: [\"http://h\"]\n":                                     "servers.0: must be a NATS URL",
		"stateDir: /s\nservers: [\"nats://h\"]\nfoo: 1\n":                             "field foo not found",
		"stateDir: /s\nservers: [\"nats://h\"]\nbuffer: { maxBytes: 10 }\n":           "buffer.maxBytes",
		"stateDir: /s\nservers: [\"nats://h\"]\nintervals: { heartbeatSeconds: 0 }\n": "intervals.heartbeatSeconds",
		"stateDir: /s\nservers: [\"nats://h\"]\nenroll: { labels: [a] }\n":            "enroll.labels",
		"stateDir: /s\nservers: [\"nats://h\"]\nreconnect: { baseMs: fast }\n":        "cannot unmarshal",
		"stateDir: [\n": "invalid",
	}
	for text, want := range cases {
		_, err := Parse([]byte(text), "/", "agent.yaml")
		var configError *Error
		if !errors.As(err, &configError) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: want an error containing %q, got %v", text, want, err)
		}
	}
}

func TestLoadReportsAMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.yaml"))
	if err == nil || !strings.Contains(err.Error(), "cannot read config") {
		t.Fatalf("got %v", err)
	}
}
