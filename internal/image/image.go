// Package image is nuv's release engineering without a Docker daemon: it names the seams between
// building the operator image (a Builder: go-containerregistry from cross-compiled Go binaries, or
// docker/podman/buildah from a Dockerfile) and delivering it (a Publisher: a remote registry, nuv's
// loopback registry, an OCI layout or archive, a kind cluster).
//
// Sub-packages hold one concern each: tag (image-tag), gobuild (the daemonless builder), dockerfile
// (the container-tool builders), publish (registry push, layout/archive, kind load), login
// (docker config.json credentials and the keychain pushes use), load (build-and-load by cluster type)
// and imagecmd (the `nuv image` commands).
package image

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/nuv-dev/nuv/internal/runner"
)

// DefaultRepository is where release images go when MY_OPERATOR_IMAGE is not set.
const DefaultRepository = "ghcr.io/nuv-dev/whisk-operator"

// DefaultPlatforms are the platforms a release image is built for.
var DefaultPlatforms = []string{"linux/amd64", "linux/arm64"}

// Spec is what a Builder builds: one Go main package (or a Dockerfile context) for some platforms,
// stamped with the release metadata.
type Spec struct {
	// Dir is the module (or Dockerfile context) directory; commands run there.
	Dir string
	// Main is the main package to compile, relative to Dir (e.g. "./operator").
	Main string
	// Platforms are os/arch[/variant] strings, already validated.
	Platforms []v1.Platform
	// Version is stamped into the binary (-X VersionVar=Version) and the version label.
	Version string
	// VersionVar is the fully qualified string variable the version is written to (default main.version).
	VersionVar string
	// Revision is the git commit; Source the repository URL; both become OCI labels.
	Revision, Source string
	// Epoch is SOURCE_DATE_EPOCH (seconds): every timestamp in the image comes from it.
	Epoch int64
	// Entrypoint is the binary name inside the image (/usr/local/bin/<Entrypoint>).
	Entrypoint string
	// Dockerfile, for the container-tool builders.
	Dockerfile string
}

// Builder turns a Spec into a multi-platform image index.
type Builder interface {
	Build(ctx context.Context, spec Spec) (v1.ImageIndex, error)
}

// Publisher delivers a built index and returns the reference it can be pulled by (by digest where
// the destination has one).
type Publisher interface {
	Publish(ctx context.Context, idx v1.ImageIndex, ref name.Reference) (string, error)
}

var (
	distOnce sync.Once
	distList []string
	distErr  error
)

// SupportedPlatforms is `go tool dist list`: every os/arch pair the Go toolchain can target.
func SupportedPlatforms() ([]string, error) {
	distOnce.Do(func() {
		goBin, err := runner.FindGo(nil)
		if err != nil {
			distErr = fmt.Errorf("list Go platforms: %w", err)
			return
		}
		out, err := runner.Output(context.Background(), runner.Cmd{Path: goBin, Args: []string{"tool", "dist", "list"}})
		if err != nil {
			distErr = fmt.Errorf("list Go platforms (go tool dist list): %w", err)
			return
		}
		distList = strings.Fields(string(out))
		sort.Strings(distList)
	})
	return distList, distErr
}

// ParsePlatforms parses a comma-separated platform list ("linux/amd64,linux/arm64/v8"). Each must
// be one Go can target; the error for one that is not lists the valid ones.
func ParsePlatforms(list string) ([]v1.Platform, error) {
	if strings.TrimSpace(list) == "" {
		list = strings.Join(DefaultPlatforms, ",")
	}
	valid, err := SupportedPlatforms()
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, v := range valid {
		known[v] = true
	}
	var out []v1.Platform
	seen := map[string]bool{}
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		parts := strings.Split(s, "/")
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
			return nil, fmt.Errorf("platform %q: want os/arch[/variant], e.g. linux/amd64", s)
		}
		if !known[parts[0]+"/"+parts[1]] {
			return nil, fmt.Errorf("platform %q is not supported by Go; valid platforms (go tool dist list): %s", s, strings.Join(valid, ", "))
		}
		p := v1.Platform{OS: parts[0], Architecture: parts[1]}
		if len(parts) == 3 {
			p.Variant = parts[2]
		}
		if seen[p.String()] {
			continue
		}
		seen[p.String()] = true
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no platform given")
	}
	return out, nil
}

// Repository returns the image repository: MY_OPERATOR_IMAGE (which may carry a tag, dropped
// here) or DefaultRepository.
func Repository(getenv func(string) string) (name.Repository, error) {
	s := getenv("MY_OPERATOR_IMAGE")
	if s == "" {
		s = DefaultRepository
	}
	ref, err := name.ParseReference(s)
	if err != nil {
		return name.Repository{}, fmt.Errorf("MY_OPERATOR_IMAGE=%q is not an image reference: %w", s, err)
	}
	return ref.Context(), nil
}
