// Package control drives a hollow fleet from a benchmark driver: newline-delimited JSON on
// stdin/stdout with the message shapes of the Node workers' IPC (packages/bench/src/
// worker-protocol.ts), for the commands the scale scenario uses. The driver enrolls the fleet,
// paces its connects, stops and restarts nodes, and times their resync after a server restart.
package control

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrUnsupported is a command (or an option of one) that only the Node workers implement.
var ErrUnsupported = errors.New("not supported by the Go generator")

// Command is one parsed message from the driver.
type Command interface{ command() }

// Enroll enrolls Count nodes named `<NamePrefix>-<index>` from FirstIndex on; node i enrolls
// with AgentTokens[i % len] and connects to AgentURLs[i % len] (its site's leaf), else with
// Token on NatsURL.
type Enroll struct {
	FirstIndex  int      `json:"firstIndex"`
	Count       int      `json:"count"`
	Token       string   `json:"token"`
	NatsURL     string   `json:"natsUrl"`
	AgentURLs   []string `json:"agentUrls"`
	AgentTokens []string `json:"agentTokens"`
	// EnrollCreds is the text of the public enrollment credentials (empty: a server without auth).
	EnrollCreds          string  `json:"enrollCreds"`
	NamePrefix           string  `json:"namePrefix"`
	Concurrency          int     `json:"concurrency"`
	StatusRefreshSeconds float64 `json:"statusRefreshSeconds"`
	FetchArtifacts       bool    `json:"fetchArtifacts"`
	AppModels            bool    `json:"appModels"`
}

// Connect starts every enrolled agent, PerSecond a second at most, with at most MaxInFlight of
// them in their connect handshake.
type Connect struct {
	PerSecond   float64 `json:"perSecond"`
	MaxInFlight int     `json:"maxInFlight"`
}

// Stop stops the agents of Nids (their state is kept for Restart).
type Stop struct {
	Nids []string `json:"nids"`
}

// Restart starts the stopped agents of Nids again.
type Restart struct {
	Nids []string `json:"nids"`
}

// WatchHellos times each running agent's next answered Hello (Nids nil: every running agent).
type WatchHellos struct {
	TimeoutMs int64     `json:"timeoutMs"`
	Nids      *[]string `json:"nids"`
}

// Shutdown stops every agent; the process exits.
type Shutdown struct{}

func (Enroll) command()      {}
func (Connect) command()     {}
func (Stop) command()        {}
func (Restart) command()     {}
func (WatchHellos) command() {}
func (Shutdown) command()    {}

// Parse reads one line from the driver; a bad or unsupported command is an error naming it.
func Parse(line []byte) (Command, error) {
	var envelope struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &envelope); err != nil {
		return nil, fmt.Errorf("not a JSON command: %w", err)
	}
	switch envelope.Type {
	case "enroll":
		command, err := decode[Enroll](line)
		if err != nil {
			return nil, err
		}
		return command, command.validate()
	case "connect":
		command, err := decode[Connect](line)
		if err != nil {
			return nil, err
		}
		if command.PerSecond <= 0 || command.MaxInFlight < 1 {
			return nil, fmt.Errorf("connect: perSecond must be above 0 and maxInFlight at least 1, got %v and %d", command.PerSecond, command.MaxInFlight)
		}
		return command, nil
	case "stop":
		return decode[Stop](line)
	case "restart":
		return decode[Restart](line)
	case "watch-hellos":
		command, err := decode[WatchHellos](line)
		if err != nil {
			return nil, err
		}
		if command.TimeoutMs < 0 {
			return nil, fmt.Errorf("watch-hellos: timeoutMs must not be negative, got %d", command.TimeoutMs)
		}
		return command, nil
	case "shutdown":
		return Shutdown{}, nil
	case "behaviours", "updates", "deliveries":
		return nil, fmt.Errorf("%s: %w", envelope.Type, ErrUnsupported)
	case "":
		return nil, errors.New(`command without a "type"`)
	default:
		return nil, fmt.Errorf("unknown command type %q", envelope.Type)
	}
}

func decode[T Command](line []byte) (T, error) {
	var command T
	if err := json.Unmarshal(line, &command); err != nil {
		return command, fmt.Errorf("%T: %w", command, err)
	}
	return command, nil
}

func (e Enroll) validate() error {
	switch {
	case e.FetchArtifacts:
		return fmt.Errorf("enroll: fetchArtifacts: %w", ErrUnsupported)
	case e.AppModels:
		return fmt.Errorf("enroll: appModels: %w", ErrUnsupported)
	case e.FirstIndex < 0 || e.Count < 0:
		return fmt.Errorf("enroll: firstIndex and count must not be negative, got %d and %d", e.FirstIndex, e.Count)
	case e.Concurrency < 1:
		return fmt.Errorf("enroll: concurrency must be at least 1, got %d", e.Concurrency)
	case e.NatsURL == "":
		return errors.New("enroll: natsUrl is required")
	case e.Token == "" && len(e.AgentTokens) == 0:
		return errors.New("enroll: token or agentTokens is required")
	case e.NamePrefix == "":
		return errors.New("enroll: namePrefix is required")
	case e.StatusRefreshSeconds < 0:
		return fmt.Errorf("enroll: statusRefreshSeconds must not be negative, got %v", e.StatusRefreshSeconds)
	}
	return nil
}

// NodeName is one enrolled node.
type NodeName struct {
	Nid  string `json:"nid"`
	Name string `json:"name"`
}

// NodeTime is when something happened to a node (milliseconds since the epoch, as Date.now()).
type NodeTime struct {
	Nid string `json:"nid"`
	At  int64  `json:"at"`
}

// Reply is one message to the driver.
type Reply interface{ replyType() string }

// Replies to the driver (FromWorker in worker-protocol.ts).
type (
	Ready    struct{}
	Progress struct {
		Enrolled  int `json:"enrolled"`
		Started   int `json:"started"`
		Connected int `json:"connected"`
		// Backlog: reports in the running agents' outboxes waiting for their PubAck.
		Backlog int `json:"backlog"`
		// Delivered: reports acknowledged so far (all agents, since the start).
		Delivered int64 `json:"delivered"`
	}
	Enrolled struct {
		Nodes      []NodeName `json:"nodes"`
		Failures   int        `json:"failures"`
		FirstError string     `json:"firstError,omitempty"`
	}
	// Started: agents handed to agent.Start (it connects in the background) and when.
	Started struct {
		Nodes []NodeTime `json:"nodes"`
	}
	Stopped struct {
		Nodes []NodeTime `json:"nodes"`
	}
	Restarted struct {
		Nodes []NodeTime `json:"nodes"`
	}
	Hellos struct {
		Nodes   []NodeTime `json:"nodes"`
		Watched int        `json:"watched"`
	}
	Error struct {
		Message string `json:"message"`
	}
)

func (Ready) replyType() string     { return "ready" }
func (Progress) replyType() string  { return "progress" }
func (Enrolled) replyType() string  { return "enrolled" }
func (Started) replyType() string   { return "started" }
func (Stopped) replyType() string   { return "stopped" }
func (Restarted) replyType() string { return "restarted" }
func (Hellos) replyType() string    { return "hellos" }
func (Error) replyType() string     { return "error" }

// Encode is a reply as one line of JSON, newline included: {"type":"…", then its fields.
func Encode(reply Reply) ([]byte, error) {
	body, err := json.Marshal(reply)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", reply.replyType(), err)
	}
	line := fmt.Appendf(nil, `{"type":%q`, reply.replyType())
	if len(body) > 2 {
		line = append(line, ',')
	}
	line = append(line, body[1:]...)
	return append(line, '\n'), nil
}
