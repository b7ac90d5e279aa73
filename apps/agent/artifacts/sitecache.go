package artifacts

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// SiteCacheReply is a direct get's answer: a stored chunk (Status 0) or a status reply.
type SiteCacheReply struct {
	Status int
	// Size is the Ef-Size header; HasSize false when absent.
	Size    string
	HasSize bool
	Data    []byte
}

// DirectGet asks the node's own leaf for one stored message (request/reply on `subject`).
// ErrSiteCacheTimeout: the leaf did not answer in time; ErrNotConnected: no connection now; any
// other error (no responders: the leaf has no JetStream, or the node is on the hub) is a miss.
type DirectGet func(ctx context.Context, subject string, payload []byte) (SiteCacheReply, error)

var (
	// ErrSiteCacheTimeout wraps a direct get that was not answered in time (a busy leaf).
	ErrSiteCacheTimeout = errors.New("site cache did not answer in time")
	// ErrNotConnected is a direct get without a connection: the gateway's source says so too.
	ErrNotConnected = errors.New("not connected")
)

// SiteCacheCounters counts chunks answered by the site cache and by the fallback.
type SiteCacheCounters struct {
	SiteCache, Fallback atomic.Int64
}

// SiteCacheOptions of SiteCacheFirst.
type SiteCacheOptions struct {
	Get DirectGet
	// Fallback answers what the site cache does not hold: the gateway.
	Fallback ChunkSource
	// Timeout per direct get (default 5 s: the leaf is next door; a slower one is skipped for that chunk).
	Timeout time.Duration
	// MissTTL: after a miss, the object is fetched from the fallback for this long (default 30 s).
	MissTTL time.Duration
	// Now is the clock (tests).
	Now      func() time.Time
	Counters *SiteCacheCounters
}

// maxMissed bounds the objects remembered as missed (the oldest is forgotten first).
const maxMissed = 1000

type siteCacheFirst struct {
	options SiteCacheOptions
	mu      sync.Mutex
	// missed: objects that missed, until when they skip the cache.
	missed map[string]time.Time
}

// SiteCacheFirst reads artifact chunks from the site's leaf first (docs/protocol.md "Site artifact
// cache"; site-cache-source.ts of the reference agent): one JetStream direct get on EF_SITE_CACHE
// per chunk, answered by the leaf the node is connected to, so a site's nodes do not each pull the
// artifact over the uplink. Anything but a whole chunk (no JetStream there, not cached, a node on
// the hub, a timeout, an odd offset) goes to the fallback instead, and a missed object skips the
// cache for MissTTL so a miss costs one request, not one per chunk. The fetcher verifies the
// SHA-256 either way.
func SiteCacheFirst(options SiteCacheOptions) ChunkSource {
	if options.Timeout <= 0 {
		options.Timeout = 5 * time.Second
	}
	if options.MissTTL <= 0 {
		options.MissTTL = 30 * time.Second
	}
	if options.Now == nil {
		options.Now = time.Now
	}
	if options.Counters == nil {
		options.Counters = &SiteCacheCounters{}
	}
	return &siteCacheFirst{options: options, missed: map[string]time.Time{}}
}

func (s *siteCacheFirst) Chunk(ctx context.Context, obj string, offset, length int64) (ChunkAnswer, error) {
	if offset%protocol.SiteCacheChunkBytes != 0 || length < protocol.SiteCacheChunkBytes || s.skips(obj) {
		return s.fallback(ctx, obj, offset, length)
	}
	getCtx, cancel := context.WithTimeout(ctx, s.options.Timeout)
	defer cancel()
	reply, err := s.options.Get(getCtx, protocol.SiteCacheDirectGetSubject, protocol.SiteCacheDirectGetRequest(obj, offset))
	switch {
	case err == nil:
	case errors.Is(err, ErrNotConnected), errors.Is(err, ErrSiteCacheTimeout), ctx.Err() != nil:
		// Only this chunk goes elsewhere: the link or the leaf may answer the next one.
		return s.fallback(ctx, obj, offset, length)
	default:
		s.miss(obj)
		return s.fallback(ctx, obj, offset, length)
	}
	size := protocol.SiteCacheHit(protocol.SiteCacheReplyFacts{
		Status: reply.Status, Size: reply.Size, HasSize: reply.HasSize, DataBytes: len(reply.Data),
	}, offset)
	if size < 0 {
		s.miss(obj)
		return s.fallback(ctx, obj, offset, length)
	}
	s.options.Counters.SiteCache.Add(1)
	return ChunkAnswer{Size: size, Data: reply.Data}, nil
}

func (s *siteCacheFirst) fallback(ctx context.Context, obj string, offset, length int64) (ChunkAnswer, error) {
	s.options.Counters.Fallback.Add(1)
	return s.options.Fallback.Chunk(ctx, obj, offset, length)
}

// skips tells whether obj missed recently (and forgets a miss that is over).
func (s *siteCacheFirst) skips(obj string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	until, missed := s.missed[obj]
	if !missed {
		return false
	}
	if s.options.Now().Before(until) {
		return true
	}
	delete(s.missed, obj)
	return false
}

func (s *siteCacheFirst) miss(obj string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.options.Now()
	s.missed[obj] = now.Add(s.options.MissTTL)
	if len(s.missed) <= maxMissed {
		return
	}
	// Past the bound: forget the oldest miss (every miss lasts MissTTL: the earliest end).
	oldest, oldestUntil := "", now.Add(s.options.MissTTL)
	for name, until := range s.missed {
		if until.Before(oldestUntil) || oldest == "" {
			oldest, oldestUntil = name, until
		}
	}
	delete(s.missed, oldest)
}
