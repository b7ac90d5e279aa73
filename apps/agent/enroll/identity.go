// Package enroll exchanges an enrollment token for node credentials and keeps them in the state
// dir, in the reference agent's layout: node.creds (0600), node.json, enroll.seed while pending.
package enroll

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// Identity is what enrollment gives a node.
type Identity struct {
	// Node id in the control plane.
	Nid string `json:"nid"`
	// Node wire id: the token in every subject of the node.
	Wid string `json:"wid"`
	// Organization wire id.
	Org string `json:"org"`
	// User JWT signed for the node's public key.
	JWT string `json:"-"`
	// The node's nkey seed ("SU…"); never leaves the node.
	Seed string `json:"-"`
}

const (
	credsFile       = "node.creds"
	idsFile         = "node.json"
	pendingSeedFile = "enroll.seed"
)

// CredsPath is the node's creds file (standard NATS format: JWT + seed).
func CredsPath(stateDir string) string { return filepath.Join(stateDir, credsFile) }

// FormatCreds renders the standard NATS creds file, byte for byte the reference agent's.
func FormatCreds(jwt, seed string) string {
	return `-----BEGIN NATS USER JWT-----
` + jwt + `
------END NATS USER JWT------

************************* IMPORTANT *************************
NKEY Seed printed below can be used to sign and prove identity.
NKEYs are sensitive and should be treated as secrets.

-----BEGIN USER NKEY SEED-----
` + seed + `
------END USER NKEY SEED------

*************************************************************
`
}

var (
	jwtBlock  = regexp.MustCompile(`-----BEGIN NATS USER JWT-----\s*\n\s*(\S+)\s*\n`)
	seedBlock = regexp.MustCompile(`-----BEGIN USER NKEY SEED-----\s*\n\s*(\S+)\s*\n`)
)

// ParseCreds reads the JWT and seed of a creds file.
func ParseCreds(text string) (jwt, seed string, err error) {
	j, s := jwtBlock.FindStringSubmatch(text), seedBlock.FindStringSubmatch(text)
	if j == nil || s == nil {
		return "", "", errors.New("not a NATS creds file (no user JWT or no nkey seed block)")
	}
	return j[1], s[1], nil
}

// writeSecret writes a file with mode 0600 from the start, replacing it atomically.
func writeSecret(path string, content []byte) error {
	temporary := path + ".tmp"
	if err := os.WriteFile(temporary, content, 0o600); err != nil {
		return err
	}
	if err := os.Chmod(temporary, 0o600); err != nil {
		return err
	}
	return os.Rename(temporary, path)
}

// Save stores an identity and forgets the pending seed.
func Save(stateDir string, identity Identity) error {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	if err := writeSecret(CredsPath(stateDir), []byte(FormatCreds(identity.JWT, identity.Seed))); err != nil {
		return fmt.Errorf("write node credentials: %w", err)
	}
	ids, _ := json.Marshal(identity)
	if err := os.WriteFile(filepath.Join(stateDir, idsFile), append(ids, '\n'), 0o644); err != nil {
		return fmt.Errorf("write node ids: %w", err)
	}
	_ = os.Remove(filepath.Join(stateDir, pendingSeedFile))
	return nil
}

// Load returns the stored identity, or ok=false when the node has not enrolled yet. A corrupt
// node.json is recovered from the credentials (the JWT's permissions name the wire id). Credentials
// re-issued by the control plane are stored with Save too (the same node, a new JWT).
func Load(stateDir string) (identity Identity, ok bool, err error) {
	text, err := os.ReadFile(CredsPath(stateDir))
	if errors.Is(err, os.ErrNotExist) {
		return Identity{}, false, nil
	}
	if err != nil {
		return Identity{}, false, fmt.Errorf("read node credentials: %w", err)
	}
	jwt, seed, err := ParseCreds(string(text))
	if err != nil {
		return Identity{}, false, fmt.Errorf("%s: %w", CredsPath(stateDir), err)
	}
	identity = Identity{JWT: jwt, Seed: seed}
	idsText, readErr := os.ReadFile(filepath.Join(stateDir, idsFile))
	if readErr == nil && json.Unmarshal(idsText, &identity) == nil && protocol.IsWireID(identity.Wid) {
		return identity, true, nil
	}
	address, err := protocol.AddressFromJWT(jwt)
	if err != nil {
		return Identity{}, false, fmt.Errorf("%s is missing or corrupt and the credentials do not name the node: %w",
			filepath.Join(stateDir, idsFile), err)
	}
	identity = Identity{Wid: address.Wid, JWT: jwt, Seed: seed}
	return identity, true, nil
}

// loadPendingSeed is the seed of an enrollment still pending, so asking again uses the same key.
func loadPendingSeed(stateDir string) string {
	text, err := os.ReadFile(filepath.Join(stateDir, pendingSeedFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(text))
}

func savePendingSeed(stateDir, seed string) error {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	return writeSecret(filepath.Join(stateDir, pendingSeedFile), []byte(seed+"\n"))
}
