package artifacts

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// BinaryName is the name a single-binary artifact is installed under (command ["./artifact"]).
const BinaryName = "artifact"

// MaxUnpackedBytes caps what an archive unpacks to (a small .tar.gz may expand a lot): 1 GiB.
const MaxUnpackedBytes = 1 << 30

// Kind of an artifact file, told by its first bytes.
type Kind string

// Artifact kinds.
const (
	KindTarGz  Kind = "tar.gz"
	KindTar    Kind = "tar"
	KindBinary Kind = "binary"
)

// DetectKind tells gzip by its magic, tar by `ustar` at 257, anything else is a binary.
func DetectKind(file string) (Kind, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	switch {
	case n >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return KindTarGz, nil
	case n >= 262 && bytes.Equal(head[257:262], []byte("ustar")):
		return KindTar, nil
	}
	return KindBinary, nil
}

// Install makes a verified artifact file into destDir: an archive is unpacked (entries stay
// inside: no absolute paths, no `..`, nothing written through a symlink — os.Root enforces it),
// a single binary becomes destDir/artifact with mode 0755. It is built in a temporary sibling and
// renamed into place, so destDir is either complete or absent.
func Install(file, destDir string, maxUnpacked int64) (Kind, error) {
	kind, err := DetectKind(file)
	if err != nil {
		return "", &Error{Code: CodeInstallFailed, Message: fmt.Sprintf("cannot read the artifact: %v", err)}
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	building := destDir + ".tmp-" + hex.EncodeToString(suffix)
	if err := os.MkdirAll(building, 0o755); err != nil {
		return "", &Error{Code: CodeInstallFailed, Message: fmt.Sprintf("cannot create %s: %v", building, err)}
	}
	if err := unpack(kind, file, building, maxUnpacked); err != nil {
		_ = os.RemoveAll(building)
		var typed *Error
		if errors.As(err, &typed) {
			return kind, err
		}
		return kind, &Error{Code: CodeInstallFailed, Message: fmt.Sprintf("cannot unpack the %s artifact: %v", kind, err)}
	}
	_ = os.RemoveAll(destDir)
	if err := os.Rename(building, destDir); err != nil {
		_ = os.RemoveAll(building)
		return kind, &Error{Code: CodeInstallFailed, Message: fmt.Sprintf("cannot install the artifact: %v", err)}
	}
	return kind, nil
}

func unpack(kind Kind, file, dir string, maxUnpacked int64) error {
	if kind == KindBinary {
		return copyExecutable(file, filepath.Join(dir, BinaryName))
	}
	// First pass: the declared sizes, so a bomb is refused before a byte is written.
	total := int64(0)
	if err := eachEntry(kind, file, func(header *tar.Header, _ io.Reader) error {
		total += max(header.Size, 0)
		return nil
	}); err != nil {
		return err
	}
	if total > maxUnpacked {
		return &Error{Code: CodeInstallFailed, Message: fmt.Sprintf("archive unpacks to %d bytes, over the %d-byte limit", total, maxUnpacked)}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return eachEntry(kind, file, func(header *tar.Header, content io.Reader) error {
		name, ok := safeName(header.Name)
		if !ok {
			return nil // the root itself, or a path leaving it: skipped (node-tar strips them)
		}
		mode := fs.FileMode(header.Mode).Perm()
		switch header.Typeflag {
		case tar.TypeDir:
			return root.MkdirAll(name, 0o755)
		case tar.TypeReg:
			if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
				return err
			}
			out, err := root.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode|0o200)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, io.LimitReader(content, header.Size)); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		case tar.TypeSymlink:
			// A link may point anywhere; os.Root refuses to write or read through one that leaves.
			if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
				return err
			}
			return root.Symlink(header.Linkname, name)
		default:
			return nil // devices, fifos, hard links: not part of an app
		}
	})
}

// safeName cleans an entry's name; false for the root itself or a name escaping it.
func safeName(name string) (string, bool) {
	cleaned := path.Clean("/" + strings.TrimLeft(name, "/"))
	cleaned = strings.TrimPrefix(cleaned, "/")
	if cleaned == "" || cleaned == "." || strings.HasPrefix(cleaned, "../") || cleaned == ".." {
		return "", false
	}
	return cleaned, true
}

func eachEntry(kind Kind, file string, visit func(*tar.Header, io.Reader) error) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	var source io.Reader = f
	if kind == KindTarGz {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return err
		}
		defer gz.Close()
		source = gz
	}
	archive := tar.NewReader(source)
	for {
		header, err := archive.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := visit(header, archive); err != nil {
			return fmt.Errorf("%s: %w", header.Name, err)
		}
	}
}

func copyExecutable(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(to, 0o755)
}
