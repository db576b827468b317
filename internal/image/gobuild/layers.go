package gobuild

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// NonRootUID is the user the image runs as (the distroless "nonroot" user).
const NonRootUID = 65532

// CACertsFile is where the host's CA bundle is read from and where it lands in the image.
const CACertsFile = "/etc/ssl/certs/ca-certificates.crt"

// file is one regular file of a layer; directories are derived from the paths.
type file struct {
	path string // absolute path in the image
	mode int64
	data []byte
	uid  int
}

// tarLayer writes files into an uncompressed tar with every timestamp set to mtime and every owner
// fixed, parents first, so that identical inputs give identical bytes.
func tarLayer(files []file, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	seen := map[string]bool{}
	for _, f := range files {
		var dirs []string
		for d := path.Dir(f.path); d != "/" && d != "." && !seen[d]; d = path.Dir(d) {
			dirs = append([]string{d}, dirs...)
		}
		for _, d := range dirs {
			seen[d] = true
			if err := tw.WriteHeader(&tar.Header{
				Typeflag: tar.TypeDir, Name: d[1:] + "/", Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX,
			}); err != nil {
				return nil, err
			}
		}
		if err := tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeReg, Name: f.path[1:], Mode: f.mode, Size: int64(len(f.data)),
			Uid: f.uid, Gid: f.uid, ModTime: mtime, Format: tar.FormatPAX,
		}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
}

// baseLayer holds what a static Go binary needs from an OS: CA certificates and the users and
// groups files naming root and the non-root user.
func baseLayer(caFile string, mtime time.Time) (v1.Layer, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("read CA certificates %s (install the ca-certificates package or set NUV_CA_CERTS): %w", caFile, err)
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonRootUID, NonRootUID)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", NonRootUID)
	return tarLayer([]file{
		{path: "/etc/group", mode: 0o644, data: []byte(group)},
		{path: "/etc/passwd", mode: 0o644, data: []byte(passwd)},
		{path: CACertsFile, mode: 0o644, data: ca},
	}, mtime)
}

// binaryLayer holds the operator binary at /usr/local/bin/<name>.
func binaryLayer(binPath, name string, mtime time.Time) (v1.Layer, error) {
	data, err := os.ReadFile(binPath)
	if err != nil {
		return nil, err
	}
	return tarLayer([]file{{path: "/usr/local/bin/" + name, mode: 0o755, data: data}}, mtime)
}

// BaseLayer is the layer every image of this builder starts from: CA certificates from caFile
// (default CACertsFile) and the users and groups files, every time at mtime.
func BaseLayer(caFile string, mtime time.Time) (v1.Layer, error) {
	if caFile == "" {
		caFile = CACertsFile
	}
	return baseLayer(caFile, mtime)
}

// BinaryLayer holds the program at binPath as /usr/local/bin/<name> (mode 0755, owner 0, time
// mtime), for images that carry more than one program.
func BinaryLayer(binPath, name string, mtime time.Time) (v1.Layer, error) {
	return binaryLayer(binPath, name, mtime)
}
