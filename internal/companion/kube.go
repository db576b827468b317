package companion

import (
	"context"
	"fmt"
	"time"

	nuvsrc "github.com/nuv-dev/nuv"
	"github.com/nuv-dev/nuv/internal/cluster/kubebin"
	"github.com/nuv-dev/nuv/internal/runner"
)

// KubeVersion is the Kubernetes version nuv pins: the one its Kubernetes programs (nuv-kube,
// nuv-node) are built from, the only version of local clusters, and the version of the node
// images nuv assembles.
const KubeVersion = "1.36.3"

// kubeLdflags stamp the Kubernetes version into the components (kubectl version parses it).
const kubeLdflags = "-X " + kubeVersionPkg + ".gitVersion=v" + KubeVersion + " -X " + kubeVersionPkg + ".gitMajor=1 -X " +
	kubeVersionPkg + ".gitMinor=36 -X " + kubeVersionPkg + ".gitTreeState=clean"

// kubeVersionPkg is the package of the Kubernetes components' version variables.
const kubeVersionPkg = "k8s.io/component-base/version"

// kubeProgram is a program of the Kubernetes build: its sources, version and stamp.
func kubeProgram(p Program) Program {
	p.Sources, p.Version, p.Ldflags = nuvsrc.KubeSources, KubeVersion, kubeLdflags
	return p
}

// The programs built from nuv's embedded Kubernetes sources (nuvsrc.KubeSources).
var (
	// ProgramKube is nuv-kube, the components of local clusters.
	ProgramKube = kubeProgram(Program{Name: "nuv-kube", Dirs: []string{"cmd/nuv-kube"},
		What:         "etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok",
		ColdEstimate: func(cores int) (time.Duration, string) { return kubebin.ColdEstimate(nil, cores) }})
	// ProgramNode is nuv-node, the multi-call binary of the kind node images nuv assembles.
	ProgramNode = kubeProgram(Program{Name: "nuv-node", Dirs: []string{"cmd/nuv-node", "internal/cluster/nodeimage/podnet"},
		What: "kubelet, kubeadm, kubectl, kube-proxy, kube-apiserver, kube-controller-manager, kube-scheduler, etcd, nuv-podnet"})
	// ProgramPause is nuv-pause, the pod sandbox process of those node images.
	ProgramPause = kubeProgram(Program{Name: "nuv-pause", Dirs: []string{"cmd/nuv-pause"}, What: "the pod sandbox's pause process", Static: true})
	// ProgramKwok is nuv-kube's sources built with the tag nuvkube_kwok: kwok alone (993 packages of
	// nuv-kube's 2680), the kwok of a binary set whose other components downloaded.
	ProgramKwok = kubeProgram(Program{Name: "kwok", Dirs: []string{"cmd/nuv-kube"}, Tags: "nuvkube_kwok",
		What: "kwok alone: kwok's releases publish no checksums to verify a download against"})
)

// BuildKube returns a cached build of p, one of the Kubernetes programs above, or builds it
// (offline: with the module cache only). Where Go is missing, a build of these very sources made
// by any Go version will do.
func (b Builder) BuildKube(ctx context.Context, p Program, offline bool) (string, error) {
	if _, err := runner.FindGo(b.getenv()); err != nil {
		if bin := b.Any(p); bin != "" {
			return bin, nil
		}
		return "", fmt.Errorf("nuv builds its Kubernetes components (nuv-kube) once with Go: %w (or set NUV_KUBE_BIN to a prebuilt nuv-kube)", err)
	}
	return b.Build(ctx, p, offline)
}
