// Package artifacts fetches a version's artifact over NATS in chunks, verifies its SHA-256 and
// installs it (docs/protocol.md "Artifacts"; fetcher.ts and install.ts of the reference agent).
package artifacts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/backoff"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// ChunkAnswer is one answered chunk request: bytes of the object with its total size, or a
// typed refusal in Err (one of protocol.ArtifactChunkErrors) and Why.
type ChunkAnswer struct {
	Size int64
	Data []byte
	Err  string
	Why  string
}

// ChunkSource answers chunk requests (the gateway over the node's own `ef.up.<site>.<wid>.art`). An error
// means the request was not answered (not connected, timeout): the fetcher retries those.
type ChunkSource interface {
	Chunk(ctx context.Context, obj string, offset, length int64) (ChunkAnswer, error)
}

// Failure codes besides the chunk errors.
const (
	CodeSHA256Mismatch = "sha256_mismatch"
	CodeInstallFailed  = "install_failed"
	CodeNoSource       = "no_source"
	CodeAborted        = "aborted"
)

// Error says why a fetch or an install failed.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Retryable tells whether asking again later may succeed (not for a wrong hash, an oversized or
// broken artifact).
func (e *Error) Retryable() bool {
	switch e.Code {
	case CodeSHA256Mismatch, "too_large", CodeInstallFailed, CodeAborted:
		return false
	}
	return true
}

// FetchOptions of one download.
type FetchOptions struct {
	Source ChunkSource
	// Object to fetch (named by the SHA-256 of its content) and the hash it must have.
	Obj, SHA256 string
	// PartPath always holds a verified-in-order prefix, so a fetch that finds one resumes.
	PartPath string
	// Larger objects are refused before any byte is fetched (default MaxArtifactBytes).
	MaxBytes int64
	// Bytes per request (default and maximum MaxArtifactChunkBytes).
	ChunkBytes int64
	// Requests in flight (default 4).
	Window int
	// Backoff between attempts of one chunk (default 0.5 s doubling to 30 s).
	Retry backoff.Policy
	// Attempts per chunk before failing `unavailable` (default unlimited: the link may come back).
	MaxAttempts int
	OnProgress  func(done, total int64)
}

type chunk struct {
	size int64
	data []byte
}

// Fetch downloads one artifact with a small window of requests in flight, each retried with
// backoff, appended in order (hashing on the way), and verifies the SHA-256 at the end.
func Fetch(ctx context.Context, options FetchOptions) (int64, error) {
	if options.ChunkBytes <= 0 || options.ChunkBytes > protocol.MaxArtifactChunkBytes {
		options.ChunkBytes = protocol.MaxArtifactChunkBytes
	}
	if options.MaxBytes <= 0 || options.MaxBytes > protocol.MaxArtifactBytes {
		options.MaxBytes = protocol.MaxArtifactBytes
	}
	if options.Window <= 0 {
		options.Window = 4
	}
	if options.Retry.Base == 0 {
		options.Retry = backoff.Policy{Base: 500 * time.Millisecond, Max: 30 * time.Second}
	}
	hasher, written, err := hashExisting(options.PartPath)
	if err != nil {
		return 0, &Error{Code: "unavailable", Message: fmt.Sprintf("read partial download: %v", err)}
	}
	file, err := os.OpenFile(options.PartPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, &Error{Code: "unavailable", Message: fmt.Sprintf("open download file: %v", err)}
	}
	defer file.Close()

	// The first answer names the size; a prefix longer than the object is not one of it: start over.
	first, err := requestChunk(ctx, options, written, 0)
	var refused *Error
	if written > 0 && (errors.As(err, &refused) && refused.Code == "bad_range" || err == nil && written > first.size) {
		if err := file.Truncate(0); err != nil {
			return 0, &Error{Code: "unavailable", Message: fmt.Sprintf("restart download: %v", err)}
		}
		hasher, written = sha256.New(), 0
		first, err = requestChunk(ctx, options, 0, 0)
	}
	if err != nil {
		return 0, err
	}
	size := first.size
	if size > options.MaxBytes {
		return 0, &Error{Code: "too_large", Message: fmt.Sprintf("artifact is %d bytes, over the %d-byte limit", size, options.MaxBytes)}
	}
	appendData := func(data []byte) error {
		if _, err := file.Write(data); err != nil {
			return &Error{Code: "unavailable", Message: fmt.Sprintf("write download file: %v", err)}
		}
		hasher.Write(data)
		written += int64(len(data))
		if options.OnProgress != nil {
			options.OnProgress(written, size)
		}
		return nil
	}
	if err := appendData(first.data); err != nil {
		return 0, err
	}

	// A window of requests in flight; answers are appended in offset order.
	windowCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		offset int64
		chunk  chunk
		err    error
	}
	results := make(chan result, options.Window)
	ready := map[int64][]byte{}
	next, inFlight := written, 0
	var failure error
	for written < size && failure == nil {
		for inFlight < options.Window && next < size {
			offset := next
			next += min(options.ChunkBytes, size-offset)
			inFlight++
			go func() {
				answer, err := requestChunk(windowCtx, options, offset, size)
				results <- result{offset: offset, chunk: answer, err: err}
			}()
		}
		r := <-results
		inFlight--
		if r.err != nil {
			failure = r.err
			break
		}
		ready[r.offset] = r.chunk.data
		for data, ok := ready[written]; ok; data, ok = ready[written] {
			delete(ready, written)
			if err := appendData(data); err != nil {
				failure = err
				break
			}
		}
	}
	cancel()
	for ; inFlight > 0; inFlight-- {
		<-results
	}
	if failure != nil {
		return 0, failure
	}
	if err := file.Sync(); err != nil {
		return 0, &Error{Code: "unavailable", Message: fmt.Sprintf("sync download file: %v", err)}
	}
	digest := hex.EncodeToString(hasher.Sum(nil))
	if digest != options.SHA256 {
		_ = file.Close()
		_ = os.Remove(options.PartPath)
		return 0, &Error{Code: CodeSHA256Mismatch, Message: fmt.Sprintf("artifact SHA-256 mismatch: expected %s, got %s", options.SHA256, digest)}
	}
	return size, nil
}

// hashExisting returns the hash state and length of what is on disk already.
func hashExisting(path string) (hash.Hash, int64, error) {
	hasher := sha256.New()
	file, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return hasher, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer file.Close()
	written, err := io.Copy(hasher, file)
	return hasher, written, err
}

// requestChunk fetches one chunk, retrying transport failures, `unavailable` and malformed
// answers; a typed refusal ends the fetch at once. knownSize 0: the first request.
func requestChunk(ctx context.Context, options FetchOptions, offset, knownSize int64) (chunk, error) {
	lastProblem := ""
	for attempt := 0; options.MaxAttempts <= 0 || attempt < options.MaxAttempts; attempt++ {
		if attempt > 0 && !backoff.Sleep(ctx, options.Retry.Delay(attempt-1)) {
			return chunk{}, &Error{Code: CodeAborted, Message: "fetch cancelled"}
		}
		if ctx.Err() != nil {
			return chunk{}, &Error{Code: CodeAborted, Message: "fetch cancelled"}
		}
		answer, err := options.Source.Chunk(ctx, options.Obj, offset, options.ChunkBytes)
		if err != nil {
			var typed *Error
			if errors.As(err, &typed) {
				return chunk{}, err
			}
			lastProblem = err.Error()
			continue
		}
		if answer.Err != "" {
			why := ""
			if answer.Why != "" {
				why = ": " + answer.Why
			}
			if answer.Err == "unavailable" {
				lastProblem = "artifact store unavailable" + why
				continue
			}
			return chunk{}, &Error{Code: answer.Err, Message: "artifact " + strings.Replace(answer.Err, "_", " ", 1) + why}
		}
		size := knownSize
		if size == 0 {
			size = answer.Size
		}
		expected := max(0, min(options.ChunkBytes, size-offset))
		if answer.Size != size || int64(len(answer.Data)) != expected {
			lastProblem = fmt.Sprintf("bad chunk at %d: %d of %d bytes, expected %d of %d", offset, len(answer.Data), answer.Size, expected, size)
			continue
		}
		return chunk{size: size, data: answer.Data}, nil
	}
	return chunk{}, &Error{Code: "unavailable", Message: fmt.Sprintf("chunk at %d not fetched after %d attempts: %s", offset, options.MaxAttempts, lastProblem)}
}
