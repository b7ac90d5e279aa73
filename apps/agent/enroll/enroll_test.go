package enroll

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/edgefleet/edgefleet/apps/agent/backoff"
	"github.com/edgefleet/edgefleet/apps/agent/internal/testnats"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// responder stands in for the gateway's enrollment: checks the proof of possession, answers
// sealed to the request's curve key, per the decide function.
type responder struct {
	mu    sync.Mutex
	keys  []string
	asked int
}

func (r *responder) start(t *testing.T, url string, decide func(asked int) protocol.EnrollReplyBody) {
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	_, err = nc.Subscribe(protocol.EnrollSubject, func(msg *nats.Msg) {
		request, err := protocol.DecodeAs[protocol.EnrollRequest](msg.Data)
		if err != nil {
			t.Errorf("bad request: %v", err)
			return
		}
		public, _ := nkeys.FromPublicKey(request.Key)
		sig, _ := base64.RawURLEncoding.DecodeString(request.Sig)
		if err := public.Verify(protocol.EnrollProofPayload(request.Tok, request.Xk), sig); err != nil {
			t.Errorf("proof of possession does not verify: %v", err)
			return
		}
		r.mu.Lock()
		r.asked++
		r.keys = append(r.keys, request.Key)
		asked := r.asked
		r.mu.Unlock()
		reply, err := protocol.SealEnrollReply(decide(asked), request.Xk)
		if err != nil {
			t.Error(err)
			return
		}
		data, _ := protocol.Encode(reply)
		_ = msg.Respond(data)
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
}

func approved() protocol.EnrollReplyBody {
	// A JWT whose permissions name the node's subjects (only its shape matters to the agent).
	return protocol.EnrollReplyBody{St: "approved", Nid: "node-1", Wid: "k3", Org: "o1", JWT: testnats.NodeJWT("k3", testnats.Site)}
}

func retryIn(seconds int64) protocol.EnrollReplyBody {
	return protocol.EnrollReplyBody{St: "pending", Retry: &seconds}
}

func options(server *testnats.Server, stateDir string) Options {
	return Options{
		Token: "efe_test", Name: "node", Labels: protocol.StringMap{{Key: "site", Value: "a7"}},
		Servers: []string{server.URL}, StateDir: stateDir, AgentVersion: "0.1.0", OS: "linux", Arch: "x64",
		Retry: backoff.Policy{Base: 50 * time.Millisecond, Max: 200 * time.Millisecond}, RequestTimeout: 500 * time.Millisecond,
	}
}

func TestEnrollment(t *testing.T) {
	cases := []struct {
		name       string
		decide     func(asked int) protocol.EnrollReplyBody
		wantAsked  int
		wantReject bool
	}{
		{"approved at once", func(int) protocol.EnrollReplyBody { return approved() }, 1, false},
		{"pending, then approved with the same key", func(asked int) protocol.EnrollReplyBody {
			if asked < 3 {
				return retryIn(1)
			}
			return approved()
		}, 3, false},
		{"rejected", func(int) protocol.EnrollReplyBody {
			why := "token expired"
			return protocol.EnrollReplyBody{St: "rejected", Err: &why}
		}, 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			server := testnats.Start(t)
			r := &responder{}
			r.start(t, server.URL, c.decide)
			stateDir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			identity, err := Enroll(ctx, options(server, stateDir))
			if c.wantReject {
				var rejected *RejectedError
				if !errors.As(err, &rejected) || rejected.Reason != "token expired" {
					t.Fatalf("want rejection, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if identity.Wid != "k3" || identity.Org != "o1" || identity.Nid != "node-1" || r.asked != c.wantAsked {
				t.Fatalf("identity %+v after %d asks", identity, r.asked)
			}
			for _, key := range r.keys {
				if key != r.keys[0] {
					t.Fatal("a pending enrollment asked again with another key")
				}
			}
			// Stored as the reference agent stores it: creds 0600, ids, no pending seed.
			info, err := os.Stat(CredsPath(stateDir))
			if err != nil || info.Mode().Perm() != 0o600 {
				t.Fatalf("creds file: %v %v", info, err)
			}
			if _, err := os.Stat(filepath.Join(stateDir, "enroll.seed")); !os.IsNotExist(err) {
				t.Fatal("pending seed left behind")
			}
			loaded, ok, err := Load(stateDir)
			if !ok || err != nil || loaded.Wid != "k3" || loaded.Seed != identity.Seed {
				t.Fatalf("load: %+v %v %v", loaded, ok, err)
			}
			// Enrolled already: no request at all.
			if again, err := Enroll(ctx, options(server, stateDir)); err != nil || again.Wid != "k3" || r.asked != c.wantAsked {
				t.Fatalf("second enroll asked again: %v", err)
			}
		})
	}
}

func TestEnrollmentWaitsForAnAnswerAndKeepsItsKeyAcrossRestarts(t *testing.T) {
	server := testnats.Start(t)
	stateDir := t.TempDir()
	// Nobody answers: the attempt is given up (the agent restarts)...
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	_, err := Enroll(ctx, options(server, stateDir))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the deadline, got %v", err)
	}
	seed, _ := os.ReadFile(filepath.Join(stateDir, "enroll.seed"))
	pair, err := nkeys.FromSeed([]byte(string(seed[:len(seed)-1])))
	if err != nil {
		t.Fatal(err)
	}
	pendingKey, _ := pair.PublicKey()
	// ...and the next run asks with the same key once the gateway answers.
	r := &responder{}
	r.start(t, server.URL, func(int) protocol.EnrollReplyBody { return approved() })
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := Enroll(ctx, options(server, stateDir)); err != nil {
		t.Fatal(err)
	}
	if r.keys[0] != pendingKey {
		t.Fatal("a restarted enrollment used a new key")
	}
}

func TestACorruptNodeFileIsRecoveredFromTheCredentials(t *testing.T) {
	// Credentials of either subject layout name the node.
	for _, site := range []string{testnats.Site, ""} {
		t.Run("site "+site, func(t *testing.T) {
			stateDir := t.TempDir()
			body := approved()
			body.JWT = testnats.NodeJWT("k3", site)
			if err := Save(stateDir, Identity{Nid: body.Nid, Wid: body.Wid, Org: body.Org, JWT: body.JWT, Seed: "SUAEXAMPLE"}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(stateDir, "node.json"), []byte("{garbage"), 0o644); err != nil {
				t.Fatal(err)
			}
			identity, ok, err := Load(stateDir)
			if !ok || err != nil || identity.Wid != "k3" {
				t.Fatalf("got %+v %v %v", identity, ok, err)
			}
			if err := os.WriteFile(CredsPath(stateDir), []byte("not creds"), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, _, err := Load(stateDir); err == nil {
				t.Fatal("corrupt creds accepted")
			}
		})
	}
}
