// Package dockerfile builds the operator image from a Dockerfile with docker (buildx), podman or
// buildah, for users whose image needs more than a static binary. Each tool writes a multi-platform
// OCI archive that nuv then reads back, so the result goes through the same publishers as the
// daemonless build. No daemon runs on nuv's CI machines: this path is tested by the commands it
// constructs only.
package dockerfile

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/nuv-dev/nuv/internal/image"
	"github.com/nuv-dev/nuv/internal/image/gobuild"
	"github.com/nuv-dev/nuv/internal/runner"
)

// Tools are the supported container tools.
var Tools = []string{"docker", "podman", "buildah"}

// Builder runs one container tool.
type Builder struct {
	// Tool is docker, podman or buildah.
	Tool string
	// Run executes a command (default: runner.Run, whose error carries the tool's stderr).
	Run func(ctx context.Context, cmd runner.Cmd) error
}

var _ image.Builder = (*Builder)(nil)

// New checks that tool is supported and installed.
func New(tool string) (*Builder, error) {
	ok := false
	for _, t := range Tools {
		ok = ok || t == tool
	}
	if !ok {
		return nil, fmt.Errorf("builder %q is not supported; use one of %s (or the default, go)", tool, strings.Join(Tools, ", "))
	}
	if _, err := exec.LookPath(tool); err != nil {
		return nil, fmt.Errorf("builder %s is not installed (not on PATH)", tool)
	}
	return &Builder{Tool: tool}, nil
}

// Commands are the command lines that build spec into an OCI archive at archive.
func Commands(tool string, spec image.Spec, archive string) ([][]string, error) {
	df := spec.Dockerfile
	if df == "" {
		df = "Dockerfile"
	}
	if !filepath.IsAbs(df) {
		df = filepath.Join(spec.Dir, df)
	}
	platforms := make([]string, len(spec.Platforms))
	for i, p := range spec.Platforms {
		platforms[i] = p.String()
	}
	plat := strings.Join(platforms, ",")
	common := []string{"--platform", plat, "-f", df}
	for _, kv := range sortedLabels(spec) {
		common = append(common, "--label", kv)
	}
	common = append(common, "--build-arg", "VERSION="+spec.Version, "--build-arg", "SOURCE_DATE_EPOCH="+strconv.FormatInt(spec.Epoch, 10))
	list := "nuv-build-" + strconv.FormatInt(spec.Epoch, 10)
	switch tool {
	case "docker":
		args := append([]string{"docker", "buildx", "build"}, common...)
		args = append(args, "--output", "type=oci,dest="+archive+",rewrite-timestamp=true", spec.Dir)
		return [][]string{args}, nil
	case "podman", "buildah":
		build := []string{tool, "build", "--timestamp", strconv.FormatInt(spec.Epoch, 10)}
		build = append(build, common...)
		build = append(build, "--manifest", list, spec.Dir)
		push := []string{tool, "manifest", "push", "--all", list, "oci-archive:" + archive}
		rm := []string{tool, "manifest", "rm", list}
		return [][]string{{tool, "manifest", "rm", list}, build, push, rm}, nil
	}
	return nil, fmt.Errorf("builder %q is not supported; use one of %s", tool, strings.Join(Tools, ", "))
}

func sortedLabels(spec image.Spec) []string {
	l := gobuild.Labels(spec)
	keys := []string{gobuild.LabelCreated, gobuild.LabelRevision, gobuild.LabelSource, gobuild.LabelVersion}
	var out []string
	for _, k := range keys {
		if v, ok := l[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// Build runs the tool and reads back the OCI archive it wrote.
func (b *Builder) Build(ctx context.Context, spec image.Spec) (v1.ImageIndex, error) {
	tmp, err := os.MkdirTemp("", "nuv-dockerfile-")
	if err != nil {
		return nil, err
	}
	archive := filepath.Join(tmp, "image.tar")
	cmds, err := Commands(b.Tool, spec, archive)
	if err != nil {
		return nil, err
	}
	run := b.Run
	if run == nil {
		run = runner.Run
	}
	for i, args := range cmds {
		err := run(ctx, runner.Cmd{Path: args[0], Args: args[1:], Dir: spec.Dir,
			Env: append(os.Environ(), "SOURCE_DATE_EPOCH="+strconv.FormatInt(spec.Epoch, 10))})
		if err != nil && !(i == 0 && b.Tool != "docker") { // removing a stale manifest list may fail
			return nil, fmt.Errorf("%s build: %w", b.Tool, err)
		}
	}
	dir := filepath.Join(tmp, "layout")
	if err := untarFile(archive, dir); err != nil {
		return nil, fmt.Errorf("read the OCI archive %s wrote: %w", b.Tool, err)
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("read the OCI archive %s wrote: %w", b.Tool, err)
	}
	return firstIndex(idx)
}

// firstIndex unwraps a layout's index.json: the tools store the built index as its one entry.
func firstIndex(top v1.ImageIndex) (v1.ImageIndex, error) {
	m, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) == 1 && m.Manifests[0].MediaType.IsIndex() {
		return top.ImageIndex(m.Manifests[0].Digest)
	}
	return top, nil
}
