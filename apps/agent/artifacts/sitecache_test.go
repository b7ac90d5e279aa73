package artifacts

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

const chunkBytes = protocol.SiteCacheChunkBytes

// fakeLeaf answers direct gets from a map of stored chunks (subject → data, size header), or with
// the error or status a case sets; it records every request.
type fakeLeaf struct {
	mu       sync.Mutex
	stored   map[string][]byte
	size     string
	status   int
	err      error
	requests []string
}

func (f *fakeLeaf) get(_ context.Context, subject string, payload []byte) (SiteCacheReply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, subject+" "+string(payload))
	if f.err != nil {
		return SiteCacheReply{}, f.err
	}
	if f.status != 0 {
		return SiteCacheReply{Status: f.status}, nil
	}
	for stored, data := range f.stored {
		if string(payload) == fmt.Sprintf(`{"last_by_subj":%q}`, stored) {
			return SiteCacheReply{Size: f.size, HasSize: f.size != "", Data: data}, nil
		}
	}
	return SiteCacheReply{Status: 404}, nil
}

func filled(n int, b byte) []byte {
	data := make([]byte, n)
	for i := range data {
		data[i] = b
	}
	return data
}

func TestSiteCacheFirstTakesWholeChunksAndSendsTheRestToTheGateway(t *testing.T) {
	const obj = "aa"
	size := int64(chunkBytes + 10)
	gateway := &memorySource{objects: map[string][]byte{obj: filled(int(size), 9)}}
	cases := []struct {
		name string
		leaf *fakeLeaf
		// offset and length the fetcher asks for
		offset, length int64
		wantFrom       string // "cache" or "gateway"
		wantData       byte
		wantAsked      int  // direct gets sent
		wantSkipsAfter bool // the object skips the cache afterwards
	}{
		{
			name:   "a whole cached chunk",
			leaf:   &fakeLeaf{stored: map[string][]byte{"efc.aa.0": filled(chunkBytes, 1)}, size: strconv.FormatInt(size, 10)},
			offset: 0, length: chunkBytes, wantFrom: "cache", wantData: 1, wantAsked: 1,
		},
		{
			name:   "the last, shorter chunk",
			leaf:   &fakeLeaf{stored: map[string][]byte{"efc.aa.1": filled(10, 2)}, size: strconv.FormatInt(size, 10)},
			offset: chunkBytes, length: chunkBytes, wantFrom: "cache", wantData: 2, wantAsked: 1,
		},
		{
			name:   "not cached (404): the gateway, and the object skips the cache",
			leaf:   &fakeLeaf{},
			offset: 0, length: chunkBytes, wantFrom: "gateway", wantData: 9, wantAsked: 1, wantSkipsAfter: true,
		},
		{
			name:   "no responders (a leaf without JetStream, a node on the hub): a miss",
			leaf:   &fakeLeaf{err: errors.New("nats: no responders available for request")},
			offset: 0, length: chunkBytes, wantFrom: "gateway", wantData: 9, wantAsked: 1, wantSkipsAfter: true,
		},
		{
			name:   "a timeout: the gateway for this chunk only",
			leaf:   &fakeLeaf{err: fmt.Errorf("direct get: %w", ErrSiteCacheTimeout)},
			offset: 0, length: chunkBytes, wantFrom: "gateway", wantData: 9, wantAsked: 1,
		},
		{
			name:   "not connected: the gateway's source answers (and says so)",
			leaf:   &fakeLeaf{err: ErrNotConnected},
			offset: 0, length: chunkBytes, wantFrom: "gateway", wantData: 9, wantAsked: 1,
		},
		{
			name:   "a short chunk is not what was stored: a miss",
			leaf:   &fakeLeaf{stored: map[string][]byte{"efc.aa.0": filled(100, 1)}, size: strconv.FormatInt(size, 10)},
			offset: 0, length: chunkBytes, wantFrom: "gateway", wantData: 9, wantAsked: 1, wantSkipsAfter: true,
		},
		{
			name:   "no Ef-Size header: a miss",
			leaf:   &fakeLeaf{stored: map[string][]byte{"efc.aa.0": filled(chunkBytes, 1)}},
			offset: 0, length: chunkBytes, wantFrom: "gateway", wantData: 9, wantAsked: 1, wantSkipsAfter: true,
		},
		{
			name:   "a status reply (503): a miss",
			leaf:   &fakeLeaf{status: 503},
			offset: 0, length: chunkBytes, wantFrom: "gateway", wantData: 9, wantAsked: 1, wantSkipsAfter: true,
		},
		{
			name:   "an offset off the chunk grid never asks the leaf",
			leaf:   &fakeLeaf{stored: map[string][]byte{"efc.aa.0": filled(chunkBytes, 1)}, size: strconv.FormatInt(size, 10)},
			offset: 5, length: chunkBytes, wantFrom: "gateway", wantData: 9, wantAsked: 0,
		},
		{
			name:   "a request shorter than a chunk never asks the leaf",
			leaf:   &fakeLeaf{stored: map[string][]byte{"efc.aa.0": filled(chunkBytes, 1)}, size: strconv.FormatInt(size, 10)},
			offset: 0, length: 1024, wantFrom: "gateway", wantData: 9, wantAsked: 0,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leaf := tc.leaf
			counters := &SiteCacheCounters{}
			source := SiteCacheFirst(SiteCacheOptions{Get: leaf.get, Fallback: gateway, Counters: counters})
			answer, err := source.Chunk(context.Background(), obj, tc.offset, tc.length)
			if err != nil {
				t.Fatal(err)
			}
			if answer.Size != size || len(answer.Data) == 0 || answer.Data[0] != tc.wantData {
				t.Fatalf("answer size %d, %d bytes starting %v; want size %d from the %s", answer.Size, len(answer.Data), answer.Data[:min(1, len(answer.Data))], size, tc.wantFrom)
			}
			fromCache := counters.SiteCache.Load() == 1
			if fromCache != (tc.wantFrom == "cache") || counters.SiteCache.Load()+counters.Fallback.Load() != 1 {
				t.Fatalf("counters: site cache %d, fallback %d; want from the %s", counters.SiteCache.Load(), counters.Fallback.Load(), tc.wantFrom)
			}
			if len(leaf.requests) != tc.wantAsked {
				t.Fatalf("%d direct gets, want %d: %v", len(leaf.requests), tc.wantAsked, leaf.requests)
			}
			if tc.wantAsked > 0 {
				want := protocol.SiteCacheDirectGetSubject + " " + string(protocol.SiteCacheDirectGetRequest(obj, tc.offset))
				if leaf.requests[0] != want {
					t.Fatalf("asked %q, want %q", leaf.requests[0], want)
				}
			}
			// The next chunk of the same object: asks the leaf again unless the object missed.
			before := len(leaf.requests)
			if _, err := source.Chunk(context.Background(), obj, 0, chunkBytes); err != nil {
				t.Fatal(err)
			}
			if skipped := len(leaf.requests) == before; skipped != tc.wantSkipsAfter {
				t.Fatalf("object skips the cache afterwards: %v, want %v", skipped, tc.wantSkipsAfter)
			}
		})
	}
}

func TestSiteCacheMissLastsItsTTLAndIsBounded(t *testing.T) {
	now := time.Unix(1_000, 0)
	leaf := &fakeLeaf{}
	gateway := &memorySource{objects: map[string][]byte{"aa": filled(10, 9)}}
	source := SiteCacheFirst(SiteCacheOptions{
		Get: leaf.get, Fallback: gateway, MissTTL: 30 * time.Second, Now: func() time.Time { return now },
	}).(*siteCacheFirst)
	ask := func(obj string) {
		t.Helper()
		_, _ = source.Chunk(context.Background(), obj, 0, chunkBytes)
	}
	ask("aa")
	ask("aa")
	if len(leaf.requests) != 1 {
		t.Fatalf("%d direct gets within the miss TTL, want 1", len(leaf.requests))
	}
	now = now.Add(31 * time.Second)
	ask("aa")
	if len(leaf.requests) != 2 {
		t.Fatalf("%d direct gets after the miss TTL, want 2", len(leaf.requests))
	}
	for i := range 2 * maxMissed {
		now = now.Add(time.Millisecond)
		ask(fmt.Sprintf("obj-%d", i))
	}
	if len(source.missed) != maxMissed {
		t.Fatalf("%d misses remembered, want the bound %d", len(source.missed), maxMissed)
	}
	if _, kept := source.missed[fmt.Sprintf("obj-%d", 2*maxMissed-1)]; !kept {
		t.Fatal("the newest miss was forgotten instead of the oldest")
	}
}

// The whole fetch through the site cache: every chunk from the leaf, verified, nothing asked of
// the gateway; with half the chunks missing, the object falls back after its first miss.
func TestFetchThroughTheSiteCache(t *testing.T) {
	data, sha := object(3*chunkBytes + 77)
	size := strconv.Itoa(len(data))
	stored := map[string][]byte{}
	for i := 0; i*chunkBytes < len(data); i++ {
		stored[protocol.SiteCacheChunkSubject(sha, int64(i))] = data[i*chunkBytes : min(len(data), (i+1)*chunkBytes)]
	}
	cases := []struct {
		name                    string
		drop                    []int64
		wantCache, wantFallback int64
	}{
		{name: "all cached", wantCache: 4},
		{name: "the third chunk missing", drop: []int64{2}, wantCache: 2, wantFallback: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leaf := &fakeLeaf{stored: map[string][]byte{}, size: size}
			for subject, chunk := range stored {
				leaf.stored[subject] = chunk
			}
			for _, index := range tc.drop {
				delete(leaf.stored, protocol.SiteCacheChunkSubject(sha, index))
			}
			gateway := &memorySource{objects: map[string][]byte{sha: data}}
			counters := &SiteCacheCounters{}
			got, err := Fetch(context.Background(), FetchOptions{
				Source: SiteCacheFirst(SiteCacheOptions{Get: leaf.get, Fallback: gateway, Counters: counters}),
				Obj:    sha, SHA256: sha, PartPath: filepath.Join(t.TempDir(), "part"), Window: 1, Retry: fastRetry(),
			})
			if err != nil || got != int64(len(data)) {
				t.Fatalf("fetch: %d bytes, %v", got, err)
			}
			if counters.SiteCache.Load() != tc.wantCache || counters.Fallback.Load() != tc.wantFallback {
				t.Fatalf("site cache %d, fallback %d; want %d, %d", counters.SiteCache.Load(), counters.Fallback.Load(), tc.wantCache, tc.wantFallback)
			}
			if int64(gateway.requests) != tc.wantFallback {
				t.Fatalf("gateway asked %d times, want %d", gateway.requests, tc.wantFallback)
			}
		})
	}
}
