package protocol

import (
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/nats-io/nkeys"
)

// Enrollment over the shared, public ENROLL credentials (enroll-seal.ts): the request proves
// possession of the node key by signing `edgefleet-enroll-v1\n<tok>\n<xk>`, and the reply is
// sealed (nkeys seal: X25519 + XSalsa20-Poly1305) to the request's one-time curve key `xk`.

// EnrollProofPayload is what a node signs to prove it holds the key it enrolls.
func EnrollProofPayload(token, curveKey string) []byte {
	return []byte("edgefleet-enroll-v1\n" + token + "\n" + curveKey)
}

// SignEnrollProof is the `sig` field: the node key's signature of the proof payload, base64url.
func SignEnrollProof(nodeKey nkeys.KeyPair, token, curveKey string) (string, error) {
	signature, err := nodeKey.Sign(EnrollProofPayload(token, curveKey))
	if err != nil {
		return "", fmt.Errorf("sign enrollment proof: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(signature), nil
}

// ErrSealNotOpened is a sealed enrollment reply that does not open with our curve key.
var ErrSealNotOpened = errors.New("the sealed reply does not open with our key")

// OpenEnrollReply returns the body of a wire reply, opened with the requester's curve key pair.
// A plain rejection is passed through; a box that does not open or decode is an error.
func OpenEnrollReply(reply EnrollReply, curve nkeys.KeyPair) (EnrollReplyBody, error) {
	if reply.Box == "" {
		errText := reply.Err
		return EnrollReplyBody{St: reply.St, Err: &errText}, nil
	}
	sealed, err := base64.RawURLEncoding.DecodeString(reply.Box)
	if err != nil {
		return EnrollReplyBody{}, &DecodeError{Type: TypeEnrollReply, Reason: ReasonInvalid, Detail: "box is not base64url"}
	}
	opened, err := curve.Open(sealed, reply.Xk)
	if err != nil {
		return EnrollReplyBody{}, &DecodeError{Type: TypeEnrollReply, Reason: ReasonInvalid, Detail: ErrSealNotOpened.Error()}
	}
	return DecodeAs[EnrollReplyBody](opened)
}

// SealEnrollReply seals body to the requester's curve key with a fresh one-time key (the
// gateway's side; the Go tests use it to check compatibility both ways).
func SealEnrollReply(body EnrollReplyBody, requesterCurveKey string) (EnrollReply, error) {
	oneTime, err := nkeys.CreateCurveKeys()
	if err != nil {
		return EnrollReply{}, fmt.Errorf("create curve key: %w", err)
	}
	encoded, err := Encode(body)
	if err != nil {
		return EnrollReply{}, err
	}
	sealed, err := oneTime.Seal(encoded, requesterCurveKey)
	if err != nil {
		return EnrollReply{}, fmt.Errorf("seal enrollment reply: %w", err)
	}
	public, err := oneTime.PublicKey()
	if err != nil {
		return EnrollReply{}, fmt.Errorf("curve public key: %w", err)
	}
	return EnrollReply{Xk: public, Box: base64.RawURLEncoding.EncodeToString(sealed)}, nil
}
