package enroll

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/edgefleet/edgefleet/apps/agent/backoff"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// Options of one enrollment.
type Options struct {
	Token  string
	Name   string
	Labels protocol.StringMap
	// Connection to send the request on; otherwise one is made from Servers and CredsFile.
	Conn    *nats.Conn
	Servers []string
	// Public enrollment credentials; empty for a dev server without auth.
	CredsFile string
	// When set: an existing identity is reused, a pending key survives restarts, the result is stored.
	StateDir string
	// AgentVersion, OS and Arch as Hello reports them.
	AgentVersion, OS, Arch string
	// Wait between asks while nobody answers (default 2 s doubling to 60 s).
	Retry          backoff.Policy
	RequestTimeout time.Duration
	Logger         *slog.Logger
}

// RejectedError is a refused enrollment: asking again will not help.
type RejectedError struct{ Reason string }

func (e *RejectedError) Error() string { return "enrollment rejected: " + e.Reason }

// Enroll exchanges the token for node credentials. The node's nkey pair is generated here and only
// the public key is sent; the reply is sealed to a one-time curve key. It retries while the
// enrollment is pending approval or nobody answers, until ctx ends.
func Enroll(ctx context.Context, options Options) (Identity, error) {
	logger := options.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if options.StateDir != "" {
		if existing, ok, err := Load(options.StateDir); err != nil || ok {
			return existing, err
		}
	}
	if options.Token == "" {
		return Identity{}, errors.New("not enrolled yet and no enrollment token")
	}
	nodeKey, seed, err := nodeKeyPair(options.StateDir)
	if err != nil {
		return Identity{}, err
	}
	curve, err := nkeys.CreateCurveKeys()
	if err != nil {
		return Identity{}, fmt.Errorf("create curve key: %w", err)
	}
	request, err := buildRequest(options, nodeKey, curve)
	if err != nil {
		return Identity{}, err
	}

	conn := options.Conn
	if conn == nil {
		opts := []nats.Option{
			nats.Name("edgefleet-agent enroll " + options.Name),
			nats.MaxReconnects(-1),
			nats.RetryOnFailedConnect(true),
		}
		if options.CredsFile != "" {
			opts = append(opts, nats.UserCredentials(options.CredsFile))
		}
		conn, err = nats.Connect(strings.Join(options.Servers, ","), opts...)
		if err != nil {
			return Identity{}, fmt.Errorf("connect for enrollment: %w", err)
		}
		defer conn.Close()
	}
	retry := options.Retry
	if retry.Base == 0 {
		retry = backoff.Policy{Base: 2 * time.Second, Max: 60 * time.Second}
	}
	timeout := options.RequestTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	for attempt := 0; ; attempt++ {
		wait := max(retry.Delay(attempt), retry.Base/4)
		requestCtx, cancel := context.WithTimeout(ctx, timeout)
		reply, err := conn.RequestWithContext(requestCtx, protocol.EnrollSubject, request)
		cancel()
		switch {
		case ctx.Err() != nil:
			return Identity{}, fmt.Errorf("enrollment: %w", ctx.Err())
		case err != nil:
			logger.Warn("enrollment request not answered", "error", err.Error())
		default:
			body, err := openReply(reply.Data, curve)
			if err != nil {
				logger.Warn("invalid enrollment reply", "error", err.Error())
				break
			}
			switch body.St {
			case "rejected":
				reason := "no reason given"
				if body.Err != nil {
					reason = *body.Err
				}
				return Identity{}, &RejectedError{Reason: reason}
			case "approved":
				identity := Identity{Nid: body.Nid, Wid: body.Wid, Org: body.Org, JWT: body.JWT, Seed: seed}
				if options.StateDir != "" {
					if err := Save(options.StateDir, identity); err != nil {
						return Identity{}, err
					}
				}
				logger.Info("enrolled", "nid", body.Nid, "wid", body.Wid, "org", body.Org)
				return identity, nil
			default:
				if body.Retry != nil {
					wait = min(time.Duration(*body.Retry)*time.Second, retry.Max)
				}
				logger.Info("enrollment pending approval", "retryInSeconds", wait.Seconds())
			}
		}
		if !backoff.Sleep(ctx, wait) {
			return Identity{}, fmt.Errorf("enrollment: %w", ctx.Err())
		}
	}
}

// nodeKeyPair is the pending enrollment's key (same key when asking again), or a new one.
func nodeKeyPair(stateDir string) (nkeys.KeyPair, string, error) {
	if stateDir != "" {
		if seed := loadPendingSeed(stateDir); seed != "" {
			if pair, err := nkeys.FromSeed([]byte(seed)); err == nil {
				return pair, seed, nil
			}
		}
	}
	pair, err := nkeys.CreateUser()
	if err != nil {
		return nil, "", fmt.Errorf("create node key: %w", err)
	}
	seed, err := pair.Seed()
	if err != nil {
		return nil, "", fmt.Errorf("node key seed: %w", err)
	}
	if stateDir != "" {
		if err := savePendingSeed(stateDir, string(seed)); err != nil {
			return nil, "", fmt.Errorf("save pending node key: %w", err)
		}
	}
	return pair, string(seed), nil
}

func buildRequest(options Options, nodeKey, curve nkeys.KeyPair) ([]byte, error) {
	public, err := nodeKey.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("node public key: %w", err)
	}
	curveKey, err := curve.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("curve public key: %w", err)
	}
	sig, err := protocol.SignEnrollProof(nodeKey, options.Token, curveKey)
	if err != nil {
		return nil, err
	}
	request := protocol.EnrollRequest{
		Tok: options.Token, Key: public, Name: options.Name,
		Av: options.AgentVersion, OS: options.OS, Arch: options.Arch, Xk: curveKey, Sig: sig,
	}
	if len(options.Labels) > 0 {
		request.Labels = options.Labels
	}
	data, err := protocol.Encode(request)
	if err != nil {
		return nil, fmt.Errorf("enrollment request: %w", err)
	}
	return data, nil
}

func openReply(data []byte, curve nkeys.KeyPair) (protocol.EnrollReplyBody, error) {
	reply, err := protocol.DecodeAs[protocol.EnrollReply](data)
	if err != nil {
		return protocol.EnrollReplyBody{}, err
	}
	return protocol.OpenEnrollReply(reply, curve)
}
