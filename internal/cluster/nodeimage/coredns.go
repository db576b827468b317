package nodeimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nuv-dev/nuv/internal/runner"
)

// corednsModule is the module CoreDNS builds from (its main package is the module's root).
const corednsModule = "github.com/coredns/coredns"

// buildCoreDNS builds CoreDNS version (a tag such as v1.14.2, the one kubeadm asks for) from its
// module through the module proxy, static, into dir/coredns.
func (b *builder) buildCoreDNS(ctx context.Context, dir, version string) ([]string, error) {
	goBin, err := runner.FindGo(b.getenv)
	if err != nil {
		return nil, fmt.Errorf("CoreDNS is built from its module with Go: %w", err)
	}
	work, err := os.MkdirTemp("", "nuv-coredns-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	env := append(os.Environ(), "GOBIN="+dir, "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-buildvcs=false")
	if b.o.Offline {
		env = append(env, "GOPROXY=off")
	}
	b.log.Infof("  go install %s@%s (a cold build compiles ~1000 packages: minutes on 2 cores)", corednsModule, version)
	if err := b.runProgress(ctx, "building CoreDNS", runner.Cmd{Path: goBin, Args: []string{"install", corednsModule + "@" + version}, Dir: work, Env: env}); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "coredns")); err != nil {
		return nil, fmt.Errorf("go install %s@%s made no coredns binary: %w", corednsModule, version, err)
	}
	return []string{"coredns"}, nil
}
