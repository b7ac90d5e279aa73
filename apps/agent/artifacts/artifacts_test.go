package artifacts

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/backoff"
)

// memorySource answers chunks from memory, with faults injected per request number.
type memorySource struct {
	mu       sync.Mutex
	objects  map[string][]byte
	requests int
	fault    func(n int, offset int64) (ChunkAnswer, error, bool)
}

func (m *memorySource) Chunk(_ context.Context, obj string, offset, length int64) (ChunkAnswer, error) {
	m.mu.Lock()
	m.requests++
	n := m.requests
	m.mu.Unlock()
	if m.fault != nil {
		if answer, err, faulted := m.fault(n, offset); faulted {
			return answer, err
		}
	}
	data, ok := m.objects[obj]
	if !ok {
		return ChunkAnswer{Err: "not_found"}, nil
	}
	if offset > int64(len(data)) {
		return ChunkAnswer{Err: "bad_range"}, nil
	}
	end := min(int64(len(data)), offset+length)
	return ChunkAnswer{Size: int64(len(data)), Data: append([]byte(nil), data[offset:end]...)}, nil
}

func object(size int) ([]byte, string) {
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 7)
	}
	sum := sha256.Sum256(data)
	return data, hex.EncodeToString(sum[:])
}

func fastRetry() backoff.Policy {
	return backoff.Policy{Base: time.Millisecond, Max: 5 * time.Millisecond}
}

func TestFetch(t *testing.T) {
	data, sha := object(10_000)
	_, otherSha := object(5)
	cases := []struct {
		name     string
		obj, sha string
		prefix   []byte
		fault    func(n int, offset int64) (ChunkAnswer, error, bool)
		maxBytes int64
		wantCode string
	}{
		{name: "in chunks, out of order answers appended in order", obj: sha, sha: sha},
		{name: "resumes from a partial file", obj: sha, sha: sha, prefix: data[:3000]},
		{name: "a prefix longer than the object starts over", obj: sha, sha: sha, prefix: bytes.Repeat([]byte{1}, 20_000)},
		{name: "transport errors and unavailable are retried", obj: sha, sha: sha,
			fault: func(n int, _ int64) (ChunkAnswer, error, bool) {
				switch n % 3 {
				case 1:
					return ChunkAnswer{}, errors.New("timeout"), true
				case 2:
					return ChunkAnswer{Err: "unavailable"}, nil, true
				}
				return ChunkAnswer{}, nil, false
			}},
		{name: "a short chunk is asked again", obj: sha, sha: sha,
			fault: func(n int, _ int64) (ChunkAnswer, error, bool) {
				return ChunkAnswer{Size: 10_000, Data: []byte{1}}, nil, n == 2
			}},
		{name: "wrong hash refused", obj: sha, sha: otherSha, wantCode: CodeSHA256Mismatch},
		{name: "not found ends the pull", obj: otherSha, sha: otherSha, wantCode: "not_found"},
		{name: "not allowed ends the pull", obj: sha, sha: sha, wantCode: "not_allowed",
			fault: func(int, int64) (ChunkAnswer, error, bool) { return ChunkAnswer{Err: "not_allowed"}, nil, true }},
		{name: "too large refused before downloading", obj: sha, sha: sha, maxBytes: 9_999, wantCode: "too_large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			source := &memorySource{objects: map[string][]byte{sha: data}, fault: c.fault}
			part := filepath.Join(t.TempDir(), "obj.part")
			if c.prefix != nil {
				if err := os.WriteFile(part, c.prefix, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var lastDone, lastTotal int64
			size, err := Fetch(context.Background(), FetchOptions{
				Source: source, Obj: c.obj, SHA256: c.sha, PartPath: part, ChunkBytes: 1000, Window: 4,
				Retry: fastRetry(), MaxBytes: c.maxBytes,
				OnProgress: func(done, total int64) { lastDone, lastTotal = done, total },
			})
			if c.wantCode != "" {
				var typed *Error
				if !errors.As(err, &typed) || typed.Code != c.wantCode {
					t.Fatalf("want %s, got %v", c.wantCode, err)
				}
				if c.wantCode == CodeSHA256Mismatch {
					if _, statErr := os.Stat(part); !errors.Is(statErr, os.ErrNotExist) {
						t.Fatal("a refused download stays on disk")
					}
					if !strings.Contains(err.Error(), "expected "+c.sha+", got "+sha) {
						t.Fatalf("message %q", err)
					}
				}
				if c.wantCode == "too_large" && source.requests != 1 {
					t.Fatalf("%d requests for an oversized object", source.requests)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(part)
			if size != 10_000 || !bytes.Equal(got, data) || lastDone != 10_000 || lastTotal != 10_000 {
				t.Fatalf("size %d, progress %d/%d, content equal %v", size, lastDone, lastTotal, bytes.Equal(got, data))
			}
			if c.prefix != nil && len(c.prefix) == 3000 && source.requests > 8 {
				t.Fatalf("resume fetched from the start (%d requests)", source.requests)
			}
		})
	}
}

func TestFetchStopsWhenCancelled(t *testing.T) {
	data, sha := object(10_000)
	source := &memorySource{objects: map[string][]byte{sha: data},
		fault: func(int, int64) (ChunkAnswer, error, bool) { return ChunkAnswer{}, errors.New("link down"), true }}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := Fetch(ctx, FetchOptions{Source: source, Obj: sha, SHA256: sha, PartPath: filepath.Join(t.TempDir(), "p"), Retry: fastRetry()})
	var typed *Error
	if !errors.As(err, &typed) || typed.Code != CodeAborted || typed.Retryable() {
		t.Fatalf("want aborted, got %v", err)
	}
}

type entry struct {
	name, link string
	kind       byte
	body       string
}

func archive(t *testing.T, gz bool, entries ...entry) string {
	t.Helper()
	var buffer bytes.Buffer
	var writer *tar.Writer
	var zipper *gzip.Writer
	if gz {
		zipper = gzip.NewWriter(&buffer)
		writer = tar.NewWriter(zipper)
	} else {
		writer = tar.NewWriter(&buffer)
	}
	for _, e := range entries {
		header := &tar.Header{Name: e.name, Typeflag: e.kind, Mode: 0o755, Linkname: e.link, Size: int64(len(e.body)), Format: tar.FormatUSTAR}
		if e.kind != tar.TypeReg {
			header.Size = 0
		}
		if err := writer.WriteHeader(header); err != nil {
			t.Fatal(err)
		}
		if e.kind == tar.TypeReg {
			_, _ = writer.Write([]byte(e.body))
		}
	}
	_ = writer.Close()
	if zipper != nil {
		_ = zipper.Close()
	}
	path := filepath.Join(t.TempDir(), "artifact")
	if err := os.WriteFile(path, buffer.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestInstall(t *testing.T) {
	outside := t.TempDir()
	cases := []struct {
		name     string
		file     func(t *testing.T) string
		kind     Kind
		want     map[string]string
		failWith string
	}{
		{name: "tar.gz with a directory", kind: KindTarGz,
			file: func(t *testing.T) string {
				return archive(t, true, entry{name: "bin/", kind: tar.TypeDir}, entry{name: "bin/server", kind: tar.TypeReg, body: "#!/bin/sh"})
			},
			want: map[string]string{"bin/server": "#!/bin/sh"}},
		{name: "plain tar", kind: KindTar,
			file: func(t *testing.T) string {
				return archive(t, false, entry{name: "run.js", kind: tar.TypeReg, body: "x"})
			},
			want: map[string]string{"run.js": "x"}},
		{name: "a single binary", kind: KindBinary,
			file: func(t *testing.T) string {
				path := filepath.Join(t.TempDir(), "b")
				_ = os.WriteFile(path, []byte("\x7fELF"), 0o600)
				return path
			},
			want: map[string]string{BinaryName: "\x7fELF"}},
		{name: "absolute and parent paths stay inside", kind: KindTarGz,
			file: func(t *testing.T) string {
				return archive(t, true, entry{name: "/etc/evil", kind: tar.TypeReg, body: "a"},
					entry{name: "../../evil2", kind: tar.TypeReg, body: "b"}, entry{name: "ok", kind: tar.TypeReg, body: "c"})
			},
			want: map[string]string{"etc/evil": "a", "evil2": "b", "ok": "c"}},
		{name: "no writing through a symlink", kind: KindTarGz, failWith: "cannot unpack",
			file: func(t *testing.T) string {
				return archive(t, true, entry{name: "out", kind: tar.TypeSymlink, link: outside},
					entry{name: "out/pwned", kind: tar.TypeReg, body: "x"})
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "versions", "abc")
			kind, err := Install(c.file(t), dest, MaxUnpackedBytes)
			if kind != c.kind {
				t.Fatalf("kind %s, want %s", kind, c.kind)
			}
			if c.failWith != "" {
				if err == nil || !strings.Contains(err.Error(), c.failWith) {
					t.Fatalf("want failure %q, got %v", c.failWith, err)
				}
				if _, statErr := os.Stat(dest); !errors.Is(statErr, os.ErrNotExist) {
					t.Fatal("a failed install left its directory")
				}
				if _, statErr := os.Stat(filepath.Join(outside, "pwned")); !errors.Is(statErr, os.ErrNotExist) {
					t.Fatal("wrote through the symlink")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for name, body := range c.want {
				got, err := os.ReadFile(filepath.Join(dest, name))
				if err != nil || string(got) != body {
					t.Fatalf("%s: %q %v", name, got, err)
				}
			}
			if c.kind == KindBinary {
				info, _ := os.Stat(filepath.Join(dest, BinaryName))
				if info.Mode().Perm() != 0o755 {
					t.Fatalf("mode %v", info.Mode())
				}
			}
		})
	}
}

func TestInstallRefusesAnArchiveBomb(t *testing.T) {
	file := archive(t, true, entry{name: "big", kind: tar.TypeReg, body: strings.Repeat("0", 5000)})
	_, err := Install(file, filepath.Join(t.TempDir(), "v"), 4096)
	var typed *Error
	if !errors.As(err, &typed) || typed.Code != CodeInstallFailed || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("got %v", err)
	}
}
