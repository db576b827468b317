// Package gobuild is nuv's daemonless image builder: it cross-compiles the operator's main package
// for each platform (CGO off, -trimpath, version stamped) and assembles OCI images with
// go-containerregistry — a non-root user, a CA-certificates layer, the binary as entrypoint and the
// OCI labels — so that the same commit always gives the same digest.
package gobuild

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/nuv-dev/nuv/internal/image"
	"github.com/nuv-dev/nuv/internal/runner"
)

// Compile builds spec.Main for platform p into a file under outDir and returns its path.
func Compile(ctx context.Context, spec image.Spec, p v1.Platform, outDir string) (string, error) {
	out := filepath.Join(outDir, strings.ReplaceAll(p.String(), "/", "_"), binaryName(spec))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("compile %s: %w", p, err)
	}
	versionVar := spec.VersionVar
	if versionVar == "" {
		versionVar = "main.version"
	}
	ldflags := "-s -w -buildid="
	if spec.Version != "" {
		ldflags += fmt.Sprintf(" -X %s=%s", versionVar, spec.Version)
	}
	main := spec.Main
	if main == "" {
		main = "."
	}
	goBin, err := runner.FindGo(nil)
	if err != nil {
		return "", fmt.Errorf("compile %s for %s: %w", main, p, err)
	}
	if err := runner.Run(ctx, runner.Cmd{Path: goBin, Args: []string{"build", "-trimpath", "-buildvcs=false",
		"-ldflags", ldflags, "-o", out, main}, Dir: spec.Dir, Env: compileEnv(os.Environ(), p)}); err != nil {
		return "", fmt.Errorf("compile %s for %s: %w", main, p, err)
	}
	return out, nil
}

// compileEnv is the environment for one cross-compilation: the caller's, with the target platform
// and CGO off (and GOFLAGS cleared of anything that would defeat reproducibility is left to the user).
func compileEnv(base []string, p v1.Platform) []string {
	env := make([]string, 0, len(base)+4)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOOS", "GOARCH", "CGO_ENABLED", "GOARM", "GOAMD64":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GOOS="+p.OS, "GOARCH="+p.Architecture, "CGO_ENABLED=0")
	if p.Architecture == "arm" && strings.HasPrefix(p.Variant, "v") {
		env = append(env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	}
	if p.Architecture == "amd64" && strings.HasPrefix(p.Variant, "v") {
		env = append(env, "GOAMD64="+p.Variant)
	}
	return env
}

func binaryName(spec image.Spec) string {
	if spec.Entrypoint != "" {
		return spec.Entrypoint
	}
	return "manager"
}
