package protocol

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
)

// The site artifact cache (docs/protocol.md "Site artifact cache"; site-cache.ts of the reference
// agent). A site whose leaf runs JetStream holds stream EF_SITE_CACHE: chunk i (128 KiB, the last
// shorter) of object <obj> is one message on `efc.<obj>.<i>` with header Ef-Size = the artifact's
// size. A node reads a chunk with one JetStream direct get on its own leaf.
const (
	SiteCacheStream = "EF_SITE_CACHE"
	// SiteCacheChunkBytes is the gateway's chunk size: an agent's offsets fall on chunk starts.
	SiteCacheChunkBytes = MaxArtifactChunkBytes
	// SiteCacheSizeHeader is on every cached chunk: the artifact's whole size.
	SiteCacheSizeHeader = "Ef-Size"
	// SiteCacheDirectGetSubject is the one JetStream subject a node's credentials may publish.
	SiteCacheDirectGetSubject = "$JS.API.DIRECT.GET." + SiteCacheStream
)

// SiteCacheChunkSubject is the stored subject of chunk `index` of `obj`.
func SiteCacheChunkSubject(obj string, index int64) string {
	return "efc." + obj + "." + strconv.FormatInt(index, 10)
}

// SiteCacheDirectGetRequest is the direct get for the chunk at `offset` (a multiple of
// SiteCacheChunkBytes): `{"last_by_subj":"efc.<obj>.<i>"}`, byte for byte what the reference agent
// sends (vectors/site-cache/direct-get.json).
func SiteCacheDirectGetRequest(obj string, offset int64) []byte {
	var out bytes.Buffer
	encoder := json.NewEncoder(&out)
	// JSON.stringify leaves <, > and & alone.
	encoder.SetEscapeHTML(false)
	_ = encoder.Encode(struct {
		LastBySubj string `json:"last_by_subj"`
	}{SiteCacheChunkSubject(obj, offset/SiteCacheChunkBytes)})
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

// SiteCacheReplyFacts is a direct get's answer as a node judges it.
type SiteCacheReplyFacts struct {
	// Status is 0 for a stored message; 404 (not cached), 408, 503, ... for a status reply.
	Status int
	// Size is the Ef-Size header; HasSize false when it is absent.
	Size      string
	HasSize   bool
	DataBytes int
}

var digits = regexp.MustCompile(`^[0-9]+$`)

// SiteCacheHit is the artifact's size when the reply is a whole cached chunk at `offset` (or the
// last one), else -1: a miss, and the node asks the gateway. Anything but what the gateway stored
// is a miss.
func SiteCacheHit(reply SiteCacheReplyFacts, offset int64) int64 {
	if reply.Status != 0 && (reply.Status < 200 || reply.Status >= 300) {
		return -1
	}
	if !reply.HasSize || !digits.MatchString(reply.Size) {
		return -1
	}
	size, err := strconv.ParseInt(reply.Size, 10, 64)
	// The reference agent's limit: a JavaScript safe integer.
	if err != nil || size > 1<<53-1 || size <= offset {
		return -1
	}
	if int64(reply.DataBytes) != min(SiteCacheChunkBytes, size-offset) {
		return -1
	}
	return size
}
