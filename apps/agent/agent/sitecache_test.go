package agent

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefleet/edgefleet/apps/agent/internal/testnats"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// runnable is a .tar.gz with run.sh and incompressible padding: several chunks on the wire.
func runnable(t *testing.T, padding int) ([]byte, string) {
	t.Helper()
	pad := make([]byte, padding)
	_, _ = rand.Read(pad)
	script := "exec sleep 60\n"
	var buffer bytes.Buffer
	zipper := gzip.NewWriter(&buffer)
	writer := tar.NewWriter(zipper)
	_ = writer.WriteHeader(&tar.Header{Name: "run.sh", Mode: 0o755, Size: int64(len(script)), Typeflag: tar.TypeReg})
	_, _ = writer.Write([]byte(script))
	_ = writer.WriteHeader(&tar.Header{Name: "pad.bin", Mode: 0o644, Size: int64(len(pad)), Typeflag: tar.TypeReg})
	_, _ = writer.Write(pad)
	_ = writer.Close()
	_ = zipper.Close()
	sum := sha256.Sum256(buffer.Bytes())
	return buffer.Bytes(), hex.EncodeToString(sum[:])
}

// seedSiteCache stores an artifact the way the gateway's seeder does (EF_SITE_CACHE on the node's
// server, chunks on efc.<obj>.<i> with Ef-Size).
func seedSiteCache(t *testing.T, js jetstream.JetStream, obj string, data []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: protocol.SiteCacheStream, Subjects: []string{"efc.>"}, AllowDirect: true, MaxMsgsPerSubject: 1,
		Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	for index := int64(0); index*protocol.SiteCacheChunkBytes < int64(len(data)); index++ {
		end := min(int64(len(data)), (index+1)*protocol.SiteCacheChunkBytes)
		msg := nats.NewMsg(protocol.SiteCacheChunkSubject(obj, index))
		msg.Header.Set(protocol.SiteCacheSizeHeader, strconv.Itoa(len(data)))
		msg.Data = data[index*protocol.SiteCacheChunkBytes : end]
		if _, err := js.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
}

// answerChunks stands in for the gateway's chunk service on the node's `ef.up.<site>.<wid>.art`.
func answerChunks(t *testing.T, nc *nats.Conn, objects map[string][]byte, asked *atomic.Int64) {
	t.Helper()
	_, err := nc.Subscribe(testnats.Address(wid, testnats.Site).UpSubject(protocol.UpArt), func(msg *nats.Msg) {
		asked.Add(1)
		request, err := protocol.DecodeAs[protocol.ArtifactChunkRequest](msg.Data)
		if err != nil {
			t.Errorf("bad chunk request: %v", err)
			return
		}
		data, ok := objects[request.Obj]
		reply := protocol.ArtifactChunkReply{Err: "not_found"}
		if ok {
			size, off := int64(len(data)), request.Off
			end := min(size, off+request.Len)
			reply = protocol.ArtifactChunkReply{Off: &off, Size: &size, Data: data[off:end]}
		}
		encoded, err := protocol.Encode(reply)
		if err != nil {
			t.Errorf("encode chunk reply: %v", err)
			return
		}
		_ = msg.Respond(encoded)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The agent reads what its server's site cache holds by direct get, and asks the gateway only for
// what it does not hold (per object): a seeded artifact costs the gateway nothing.
func TestArtifactsComeFromTheSiteCacheAndFallBackPerObject(t *testing.T) {
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, wid)
	js, err := jetstream.New(platform.Conn())
	if err != nil {
		t.Fatal(err)
	}
	cachedData, cachedSha := runnable(t, 3*protocol.SiteCacheChunkBytes)
	missingData, missingSha := runnable(t, 2*protocol.SiteCacheChunkBytes)
	seedSiteCache(t, js, cachedSha, cachedData)
	var gatewayAsked atomic.Int64
	answerChunks(t, platform.Conn(), map[string][]byte{cachedSha: cachedData, missingSha: missingData}, &gatewayAsked)

	spec := protocol.RunSpec{Command: []string{"sh", "run.sh"}}
	platform.Prepare(protocol.DesiredPut{App: "cached", Ver: "1.0", Spec: spec, Art: &protocol.ArtifactRef{Sha: cachedSha}})
	a := startAgent(t, t.TempDir(), server)
	running := func(app string) func() (bool, bool) {
		return func() (bool, bool) {
			for _, instance := range a.runtime.Instances() {
				if instance.App == app && instance.St == protocol.StateRunning {
					return true, true
				}
			}
			return false, false
		}
	}
	waitFor(t, "the cached artifact running", 20*time.Second, running("cached"))
	cachedChunks := (int64(len(cachedData)) + protocol.SiteCacheChunkBytes - 1) / protocol.SiteCacheChunkBytes
	if got := a.chunkCounters.SiteCache.Load(); got != cachedChunks {
		t.Fatalf("%d chunks from the site cache, want all %d", got, cachedChunks)
	}
	if gatewayAsked.Load() != 0 || a.chunkCounters.Fallback.Load() != 0 {
		t.Fatalf("the gateway was asked %d times for a seeded artifact", gatewayAsked.Load())
	}

	// Not in the cache: one direct get misses, every chunk then comes from the gateway.
	platform.Put(protocol.DesiredPut{App: "missing", Ver: "1.0", Spec: spec, Art: &protocol.ArtifactRef{Sha: missingSha}})
	waitFor(t, "the uncached artifact running", 20*time.Second, running("missing"))
	missingChunks := (int64(len(missingData)) + protocol.SiteCacheChunkBytes - 1) / protocol.SiteCacheChunkBytes
	if gatewayAsked.Load() != missingChunks {
		t.Fatalf("the gateway was asked %d times, want once per chunk (%d)", gatewayAsked.Load(), missingChunks)
	}
	if got := a.chunkCounters.SiteCache.Load(); got != cachedChunks {
		t.Fatalf("%d chunks from the site cache after the miss, want still %d", got, cachedChunks)
	}
	// The direct gets count as artifact control bytes, like the gateway's chunks.
	for _, count := range a.control.snapshot() {
		if count.Type == "art" && count.Received < int64(len(cachedData)+len(missingData)) {
			t.Fatalf("art bytes received %d, less than both artifacts", count.Received)
		}
	}
}
