package protocol

import (
	"net/url"
	"regexp"
	"time"
)

// RunSpec says how the agent runs an app version (`spec` of a DesiredDelta put; run-spec.ts).
// Long JSON names on purpose: it is what operators write, and what state.json stores.
type RunSpec struct {
	Command          []string     `json:"command"`
	Env              StringMap    `json:"env,omitempty"`
	Cwd              string       `json:"cwd,omitempty"`
	Health           *HealthCheck `json:"health,omitempty"`
	Restart          string       `json:"restart,omitempty"`
	StopGraceSeconds *int64       `json:"stopGraceSeconds,omitempty"`
	RevertOnFailure  *bool        `json:"revertOnFailure,omitempty"`
}

// HealthCheck has exactly one of Exec (exit code 0 = healthy) and HTTP (2xx/3xx = healthy).
type HealthCheck struct {
	Exec             []string `json:"exec,omitempty"`
	HTTP             string   `json:"http,omitempty"`
	IntervalSeconds  *int64   `json:"intervalSeconds,omitempty"`
	TimeoutSeconds   *int64   `json:"timeoutSeconds,omitempty"`
	FailureThreshold *int64   `json:"failureThreshold,omitempty"`
}

// RestartPolicies are the values of RunSpec.Restart ("" means the default, "always").
var RestartPolicies = []string{"always", "on-failure", "never"}

const (
	defaultHealthIntervalSeconds  = 10
	defaultHealthTimeoutSeconds   = 5
	defaultHealthFailureThreshold = 3
	defaultStopGraceSeconds       = 10
	uncheckedStartWindow          = 10 * time.Second
)

var envNameRegexp = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Interval between health checks.
func (h *HealthCheck) Interval() time.Duration {
	return seconds(h.IntervalSeconds, defaultHealthIntervalSeconds)
}

// Timeout of one health check.
func (h *HealthCheck) Timeout() time.Duration {
	return seconds(h.TimeoutSeconds, defaultHealthTimeoutSeconds)
}

// Threshold is the number of consecutive failures after which the app is restarted.
func (h *HealthCheck) Threshold() int {
	if h.FailureThreshold == nil {
		return defaultHealthFailureThreshold
	}
	return int(*h.FailureThreshold)
}

// RestartPolicy is the effective restart policy.
func (s *RunSpec) RestartPolicy() string {
	if s.Restart == "" {
		return "always"
	}
	return s.Restart
}

// StopGrace is how long a stop waits after SIGTERM before SIGKILL.
func (s *RunSpec) StopGrace() time.Duration {
	return seconds(s.StopGraceSeconds, defaultStopGraceSeconds)
}

// Reverts tells whether a version failing its start window is replaced by the previous one.
func (s *RunSpec) Reverts() bool { return s.RevertOnFailure != nil && *s.RevertOnFailure }

// StartWindow is how long a newly started version is on probation: with a health check
// interval × threshold + timeout (35 s with the defaults), without one 10 s of staying up.
func (s *RunSpec) StartWindow() time.Duration {
	if s.Health == nil {
		return uncheckedStartWindow
	}
	return s.Health.Interval()*time.Duration(s.Health.Threshold()) + s.Health.Timeout()
}

func seconds(value *int64, fallback int64) time.Duration {
	if value == nil {
		return time.Duration(fallback) * time.Second
	}
	return time.Duration(*value) * time.Second
}

func readRunSpec(o object) RunSpec {
	spec := RunSpec{Command: o.stringList("command", 1, 256, text{1, 4096}, false)}
	spec.Env = o.record("env", func(name, path string) bool {
		if !envNameRegexp.MatchString(name) {
			o.issues.add(path, "environment variable names are [A-Za-z_][A-Za-z0-9_]*")
			return false
		}
		return true
	}, text{0, 32_768})
	if o.has("cwd") {
		spec.Cwd = *o.optText("cwd", text{1, 4096})
	}
	if o.has("health") {
		if health, ok := o.sub("health"); ok {
			spec.Health = readHealthCheck(health)
		}
	}
	spec.Restart = o.optEnum("restart", RestartPolicies)
	spec.StopGraceSeconds = o.optInt("stopGraceSeconds", 0, 600)
	spec.RevertOnFailure = o.optBool("revertOnFailure")
	return spec
}

func readHealthCheck(o object) *HealthCheck {
	check := &HealthCheck{Exec: o.stringList("exec", 1, 64, text{1, 4096}, true)}
	if value, present := o.m.Get("http"); present {
		path := o.at("http")
		if s, ok := checkString(value, path, o.issues); ok {
			check.HTTP = s
			parsed, err := url.Parse(s)
			switch {
			case err != nil || parsed.Host == "":
				o.issues.add(path, "invalid URL")
			case parsed.Scheme != "http" && parsed.Scheme != "https":
				o.issues.add(path, "invalid URL: protocol must be http or https")
			case jsLength(s) > 2048:
				o.issues.add(path, "too long: expected at most 2048 characters")
			}
		}
	}
	check.IntervalSeconds = o.optInt("intervalSeconds", 1, 3600)
	check.TimeoutSeconds = o.optInt("timeoutSeconds", 1, 600)
	check.FailureThreshold = o.optInt("failureThreshold", 1, 100)
	if o.has("exec") == o.has("http") {
		o.issues.add(o.path, "a health check has exactly one of exec or http")
	}
	return check
}

func (s *RunSpec) toMap() *Map {
	m := NewMap().Put("command", s.Command)
	if s.Env != nil {
		m.Put("env", s.Env.toMap())
	}
	if s.Cwd != "" {
		m.Put("cwd", s.Cwd)
	}
	if h := s.Health; h != nil {
		health := NewMap()
		if h.Exec != nil {
			health.Put("exec", h.Exec)
		}
		if h.HTTP != "" {
			health.Put("http", h.HTTP)
		}
		putOptInt(health, "intervalSeconds", h.IntervalSeconds)
		putOptInt(health, "timeoutSeconds", h.TimeoutSeconds)
		putOptInt(health, "failureThreshold", h.FailureThreshold)
		m.Put("health", health)
	}
	if s.Restart != "" {
		m.Put("restart", s.Restart)
	}
	putOptInt(m, "stopGraceSeconds", s.StopGraceSeconds)
	if s.RevertOnFailure != nil {
		m.Put("revertOnFailure", *s.RevertOnFailure)
	}
	return m
}

func putOptInt(m *Map, key string, value *int64) {
	if value != nil {
		m.Put(key, *value)
	}
}

func putOptString(m *Map, key string, value *string) {
	if value != nil {
		m.Put(key, *value)
	}
}

func putNonEmpty(m *Map, key, value string) {
	if value != "" {
		m.Put(key, value)
	}
}
