package release

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/nuv-dev/nuv/internal/image"
	"github.com/nuv-dev/nuv/internal/image/gobuild"
)

// ImageName is the repository name of nuv's image under $REGISTRY.
const ImageName = "nuv"

// Source is nuv's repository, the image's source label.
const Source = "https://github.com/nuv-dev/nuv"

// ImageIndex assembles the multi-arch image of nuv, for CI jobs that run nuv in a container, from
// the linux archives' programs of res with nuv's daemonless image builder (internal/image/gobuild):
// per platform the builder's base layer (CA certificates, users), the slim nuv as entrypoint and
// one more layer per further program beside it in /usr/local/bin, every time at the release's
// epoch. caFile is the CA bundle copied in ("" for the builder's default).
func ImageIndex(res *Result, s Stamp, caFile string) (v1.ImageIndex, error) {
	mtime := time.Unix(s.Epoch, 0).UTC()
	base, err := gobuild.BaseLayer(caFile, mtime)
	if err != nil {
		return nil, fmt.Errorf("release image: %w", err)
	}
	spec := image.Spec{Version: s.Version, Revision: s.Commit, Source: Source, Epoch: s.Epoch, Entrypoint: "nuv"}
	var imgs []v1.Image
	for _, a := range res.Archives {
		if a.Platform.OS != "linux" {
			continue
		}
		p := v1.Platform{OS: a.Platform.OS, Architecture: a.Platform.Arch}
		var front string
		for _, b := range a.Binaries {
			if b.Name == "nuv" {
				front = b.Path
			}
		}
		if front == "" {
			return nil, fmt.Errorf("release image: the %s archive has no nuv program", a.Platform)
		}
		img, err := gobuild.Assemble(spec, p, base, front)
		if err != nil {
			return nil, fmt.Errorf("release image for %s: %w", a.Platform, err)
		}
		for _, b := range a.Binaries {
			if b.Name == "nuv" {
				continue
			}
			l, err := gobuild.BinaryLayer(b.Path, filepath.Base(b.Name), mtime)
			if err != nil {
				return nil, fmt.Errorf("release image for %s: %w", a.Platform, err)
			}
			img, err = mutate.Append(img, mutate.Addendum{Layer: l, MediaType: types.OCILayer,
				History: v1.History{Created: v1.Time{Time: mtime}, CreatedBy: "nuv: /usr/local/bin/" + b.Name, Author: "nuv"}})
			if err != nil {
				return nil, fmt.Errorf("release image for %s: %w", a.Platform, err)
			}
		}
		spec.Platforms = append(spec.Platforms, p)
		imgs = append(imgs, img)
	}
	if len(imgs) == 0 {
		return nil, fmt.Errorf("release image: no linux platform in the release")
	}
	return gobuild.Index(spec, imgs)
}

// ImageRef is where the image of version v goes under registry (host[:port][/path]).
func ImageRef(registry, v string) (name.Tag, error) {
	ref, err := name.NewTag(registry + "/" + ImageName + ":" + v)
	if err != nil {
		return name.Tag{}, fmt.Errorf("REGISTRY=%s: %w", registry, err)
	}
	return ref, nil
}

// Publisher pushes an image index (internal/image/publish.Remote).
type Publisher interface {
	Publish(ctx context.Context, idx v1.ImageIndex, ref name.Reference) (string, error)
}

// PushImage assembles the image of res and pushes it as <registry>/nuv:<version>; it returns the
// reference by digest.
func PushImage(ctx context.Context, pub Publisher, res *Result, s Stamp, registry, caFile string) (string, error) {
	ref, err := ImageRef(registry, s.Version)
	if err != nil {
		return "", err
	}
	idx, err := ImageIndex(res, s, caFile)
	if err != nil {
		return "", err
	}
	return pub.Publish(ctx, idx, ref)
}
