package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// DesiredApp is one desired app as of the applied revision: restarted from here after a restart.
type DesiredApp struct {
	Ver  string                `json:"ver"`
	Spec protocol.RunSpec      `json:"spec"`
	Art  *protocol.ArtifactRef `json:"art,omitempty"`
}

// State is `<stateDir>/state.json`, the reference agent's format (state-store.ts).
type State struct {
	// Rev is the last applied desired revision.
	Rev int64 `json:"rev"`
	// Seq is the last sequence used per report type (the next report takes +1).
	Seq struct {
		St int64 `json:"st"`
		Mx int64 `json:"mx"`
	} `json:"seq"`
	Desired map[string]DesiredApp `json:"desired"`
}

// clone copies the state, its desired apps map included (the specs are never modified in place).
func (s State) clone() State {
	copied := s
	copied.Desired = make(map[string]DesiredApp, len(s.Desired))
	for app, desired := range s.Desired {
		copied.Desired[app] = desired
	}
	return copied
}

// LoadState reads the state file. Missing: a fresh node. Corrupt: it is set aside and the agent
// starts over from revision 0 (the control plane sends the whole desired state again) with report
// sequences from the current time in milliseconds, so its reports stay newer than any it sent
// before (the gateway ignores a sequence that is not newer); `recovered` says so.
func LoadState(path string, now time.Time) (state State, recovered error) {
	state = State{Desired: map[string]DesiredApp{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return state, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &state)
	}
	if err == nil {
		err = validateState(state)
	}
	if err == nil {
		if state.Desired == nil {
			state.Desired = map[string]DesiredApp{}
		}
		return state, nil
	}
	aside := fmt.Sprintf("%s.corrupt-%d", path, now.UnixMilli())
	_ = os.Rename(path, aside)
	fresh := State{Desired: map[string]DesiredApp{}}
	fresh.Seq.St, fresh.Seq.Mx = now.UnixMilli(), now.UnixMilli()
	return fresh, fmt.Errorf("agent state %s is corrupt (%v); set aside as %s, starting from revision 0", path, err, filepath.Base(aside))
}

func validateState(state State) error {
	if state.Rev < 0 || state.Rev > protocol.Int4Max || state.Seq.St < 0 || state.Seq.Mx < 0 {
		return errors.New("revision or sequence out of range")
	}
	for app, desired := range state.Desired {
		if app == "" || desired.Ver == "" || len(desired.Spec.Command) == 0 {
			return fmt.Errorf("desired app %q is incomplete", app)
		}
	}
	return nil
}

// SaveState replaces the state file atomically (write, sync, rename).
func SaveState(path string, state State) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(state)
	if err != nil {
		return err
	}
	temporary := path + ".tmp"
	file, err := os.OpenFile(temporary, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = file.Write(data)
	if err == nil {
		err = file.Sync()
	}
	if closeErr := file.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		_ = os.Remove(temporary)
		return err
	}
	return os.Rename(temporary, path)
}
