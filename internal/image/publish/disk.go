package publish

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/nuv-dev/nuv/internal/image"
)

// Layout writes the index into an OCI image layout directory, annotated with the reference name
// (org.opencontainers.image.ref.name), replacing an earlier entry of the same name.
type Layout struct{ Dir string }

var _ image.Publisher = Layout{}

// Publish implements image.Publisher.
func (l Layout) Publish(_ context.Context, idx v1.ImageIndex, ref name.Reference) (string, error) {
	p, err := layout.FromPath(l.Dir)
	if err != nil {
		if p, err = layout.Write(l.Dir, empty.Index); err != nil {
			return "", fmt.Errorf("create OCI layout %s: %w", l.Dir, err)
		}
	}
	refName := ref.String()
	ann := map[string]string{"org.opencontainers.image.ref.name": refName}
	if err := p.ReplaceIndex(idx, matchRefName(refName), layout.WithAnnotations(ann)); err != nil {
		return "", fmt.Errorf("write OCI layout %s: %w", l.Dir, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return "", err
	}
	return ref.Context().Digest(d.String()).String(), nil
}

func matchRefName(n string) func(v1.Descriptor) bool {
	return func(d v1.Descriptor) bool { return d.Annotations["org.opencontainers.image.ref.name"] == n }
}

// Archive writes the index as an OCI archive: an OCI image layout in a tar file (what
// `podman load`, `skopeo copy oci-archive:` and docker 25+ read). Entries are sorted with fixed
// times, so the same index gives the same file.
type Archive struct{ File string }

var _ image.Publisher = Archive{}

// Publish implements image.Publisher.
func (a Archive) Publish(ctx context.Context, idx v1.ImageIndex, ref name.Reference) (string, error) {
	tmp, err := os.MkdirTemp("", "nuv-oci-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	out, err := Layout{Dir: tmp}.Publish(ctx, idx, ref)
	if err != nil {
		return "", err
	}
	if err := tarDir(tmp, a.File); err != nil {
		return "", fmt.Errorf("write OCI archive %s: %w", a.File, err)
	}
	return out, nil
}

func tarDir(dir, file string) error {
	var paths []string
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			paths = append(paths, p)
		}
		return nil
	}); err != nil {
		return err
	}
	sort.Strings(paths)
	tmp := file + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	tw := tar.NewWriter(f)
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: time.Unix(0, 0), Mode: 0o644, Format: tar.FormatPAX}
		if st.IsDir() {
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			continue
		}
		hdr.Typeflag, hdr.Size = tar.TypeReg, st.Size()
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(tw, src)
		src.Close()
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}
