package protocol

import (
	"path/filepath"
	"testing"
)

// The reference agent's tests read the same file (protocol-vectors.test.ts): both agents send the
// same bytes for a chunk and judge the leaf's answer alike.
type siteCacheVectors struct {
	ChunkBytes int64 `json:"chunkBytes"`
	Requests   []struct {
		Obj     string `json:"obj"`
		Offset  int64  `json:"offset"`
		Subject string `json:"subject"`
		Payload string `json:"payload"`
	} `json:"requests"`
	Replies []struct {
		Name      string  `json:"name"`
		Offset    int64   `json:"offset"`
		Status    int     `json:"status"`
		Size      *string `json:"size"`
		DataBytes int     `json:"dataBytes"`
		Hit       *int64  `json:"hit"`
	} `json:"replies"`
}

func TestSiteCacheDirectGetVectors(t *testing.T) {
	var vectors siteCacheVectors
	readVectors(t, filepath.Join("site-cache", "direct-get.json"), &vectors)
	if vectors.ChunkBytes != SiteCacheChunkBytes {
		t.Fatalf("chunk size %d, the vectors cut at %d", SiteCacheChunkBytes, vectors.ChunkBytes)
	}
	if len(vectors.Requests) == 0 || len(vectors.Replies) == 0 {
		t.Fatal("no site cache vectors")
	}
	for _, v := range vectors.Requests {
		t.Run("request at "+SiteCacheChunkSubject(v.Obj, v.Offset/SiteCacheChunkBytes), func(t *testing.T) {
			if SiteCacheDirectGetSubject != v.Subject {
				t.Fatalf("subject %q, want %q", SiteCacheDirectGetSubject, v.Subject)
			}
			if got := string(SiteCacheDirectGetRequest(v.Obj, v.Offset)); got != v.Payload {
				t.Fatalf("payload %s, want %s", got, v.Payload)
			}
		})
	}
	for _, v := range vectors.Replies {
		t.Run(v.Name, func(t *testing.T) {
			facts := SiteCacheReplyFacts{Status: v.Status, DataBytes: v.DataBytes}
			if v.Size != nil {
				facts.Size, facts.HasSize = *v.Size, true
			}
			want := int64(-1)
			if v.Hit != nil {
				want = *v.Hit
			}
			if got := SiteCacheHit(facts, v.Offset); got != want {
				t.Fatalf("judged %d, want %d", got, want)
			}
		})
	}
}
