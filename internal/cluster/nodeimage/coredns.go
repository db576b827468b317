package nodeimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nuv-dev/nuv/internal/runner"
)

// Go programs of other projects the node image holds, built from their modules through the module
// proxy (static: no cgo).
const (
	// corednsModule is the module CoreDNS builds from (its main package is the module's root); the
	// version is the tag kubeadm asks for.
	corednsModule = "github.com/coredns/coredns"
	// crictlPackage is crictl (kind's nodes have it: kind's log export and image helpers run it).
	crictlPackage = "sigs.k8s.io/cri-tools/cmd/crictl"
	// CrictlVersion is the cri-tools release built (the newest the module proxy serves for
	// Kubernetes 1.36: v1.35.0 and v1.36.0 are not served).
	CrictlVersion = "v1.37.0"
)

// crictlLdflags stamps crictl's version as cri-tools' release build does.
const crictlLdflags = "-X sigs.k8s.io/cri-tools/pkg/version.Version=" + CrictlVersion

// buildGoTool builds pkg@version with `go install` (and ldflags) into dir (as bin) and returns
// bin's name.
func (b *builder) buildGoTool(ctx context.Context, dir, pkg, version, bin, ldflags string) ([]string, error) {
	goBin, err := runner.FindGo(b.getenv)
	if err != nil {
		return nil, fmt.Errorf("%s is built from its module with Go: %w", pkg, err)
	}
	work, err := os.MkdirTemp("", "nuv-gotool-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	env := append(os.Environ(), "GOBIN="+dir, "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-buildvcs=false")
	if b.o.Offline {
		env = append(env, "GOPROXY=off")
	}
	b.log.Infof("  go install %s@%s (cold: minutes on 2 cores; Go's build cache keeps it)", pkg, version)
	if err := b.runProgress(ctx, "building "+bin, runner.Cmd{Path: goBin, Args: []string{"install", "-ldflags=" + ldflags, pkg + "@" + version}, Dir: work, Env: env}); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
		return nil, fmt.Errorf("go install %s@%s made no %s binary: %w", pkg, version, bin, err)
	}
	return []string{bin}, nil
}
