package gobuild

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image"
)

// OCI label keys set on every image.
const (
	LabelRevision = "org.opencontainers.image.revision"
	LabelSource   = "org.opencontainers.image.source"
	LabelVersion  = "org.opencontainers.image.version"
	LabelCreated  = "org.opencontainers.image.created"
)

// Builder compiles and assembles images with go-containerregistry; no daemon is involved.
type Builder struct {
	// CAFile is the CA bundle copied into the image (default CACertsFile).
	CAFile string
	// Log reports each platform as it is compiled.
	Log cli.Logger
}

var _ image.Builder = (*Builder)(nil)

// Build compiles spec.Main for every platform in parallel and returns the OCI image index.
func (b *Builder) Build(ctx context.Context, spec image.Spec) (v1.ImageIndex, error) {
	if len(spec.Platforms) == 0 {
		return nil, fmt.Errorf("build: no platform")
	}
	log := b.Log
	if log == nil {
		log = cli.Quiet()
	}
	caFile := b.CAFile
	if caFile == "" {
		caFile = CACertsFile
	}
	mtime := time.Unix(spec.Epoch, 0).UTC()
	base, err := baseLayer(caFile, mtime)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "nuv-build-")
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	defer os.RemoveAll(tmp)

	imgs := make([]v1.Image, len(spec.Platforms))
	g, gctx := errgroup.WithContext(ctx)
	for i, p := range spec.Platforms {
		g.Go(func() error {
			start := time.Now()
			bin, err := Compile(gctx, spec, p, tmp)
			if err != nil {
				return err
			}
			img, err := Assemble(spec, p, base, bin)
			if err != nil {
				return fmt.Errorf("assemble %s: %w", p, err)
			}
			imgs[i] = img
			log.V(1).Infof("built %s in %s", p, time.Since(start).Round(time.Millisecond))
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return Index(spec, imgs)
}

// Assemble makes the image for platform p: base layer, binary layer, config with entrypoint,
// non-root user, labels and every timestamp at spec.Epoch. The layers are read eagerly so that
// the temporary binary may be removed afterwards.
func Assemble(spec image.Spec, p v1.Platform, base v1.Layer, binPath string) (v1.Image, error) {
	name := binaryName(spec)
	mtime := time.Unix(spec.Epoch, 0).UTC()
	bin, err := binaryLayer(binPath, name, mtime)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer, History: history(mtime, "nuv: CA certificates, users")},
		mutate.Addendum{Layer: bin, MediaType: types.OCILayer, History: history(mtime, "nuv: /usr/local/bin/"+name)},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant, cf.OSVersion = p.OS, p.Architecture, p.Variant, p.OSVersion
	cf.Created = v1.Time{Time: mtime}
	cf.Author = "nuv"
	cf.Config.Entrypoint = []string{"/usr/local/bin/" + name}
	cf.Config.User = strconv.Itoa(NonRootUID) + ":" + strconv.Itoa(NonRootUID)
	cf.Config.WorkingDir = "/"
	cf.Config.Env = []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"SSL_CERT_FILE=" + CACertsFile,
	}
	cf.Config.Labels = Labels(spec)
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	return img, nil
}

// Labels are the OCI labels (and index annotations) of a build.
func Labels(spec image.Spec) map[string]string {
	l := map[string]string{
		LabelCreated: time.Unix(spec.Epoch, 0).UTC().Format(time.RFC3339),
	}
	if spec.Revision != "" {
		l[LabelRevision] = spec.Revision
	}
	if spec.Source != "" {
		l[LabelSource] = spec.Source
	}
	if spec.Version != "" {
		l[LabelVersion] = spec.Version
	}
	return l
}

func history(t time.Time, by string) v1.History {
	return v1.History{Created: v1.Time{Time: t}, CreatedBy: by, Author: "nuv"}
}

// Index puts one image per platform into an OCI image index annotated with the build's labels.
func Index(spec image.Spec, imgs []v1.Image) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	adds := make([]mutate.IndexAddendum, 0, len(imgs))
	for i, img := range imgs {
		p := spec.Platforms[i]
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			MediaType: types.OCIManifestSchema1,
			Platform:  &p,
		}})
	}
	idx = mutate.AppendManifests(idx, adds...)
	return mutate.Annotations(idx, Labels(spec)).(v1.ImageIndex), nil
}
