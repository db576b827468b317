package companion

import (
	"context"
	"errors"
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

// BuildKube returns p, one of the Kubernetes programs above, from the first of: this nuv's
// release unpacked in the cache, a cached build found without working out a module set
// (CachedQuick), the release beside nuv or fetched and verified (Released), a cached build or a
// build now (offline: with the module cache only). Where Go is missing, a build of
// these very sources made by any Go version will do. A release archive refused (ErrRefused: a
// checksum that does not match, a companion of another version beside nuv) is an error; one that
// could not be fetched falls back to the build with a line saying why.
func (b Builder) BuildKube(ctx context.Context, p Program, offline bool) (string, error) {
	if bin, _ := b.ReleaseCached(p); bin != "" {
		return bin, nil
	}
	if bin := b.CachedQuick(ctx, p); bin != "" {
		return bin, nil
	}
	_, goErr := runner.FindGo(b.getenv())
	bin, err := b.Released(ctx, p, offline)
	switch {
	case err == nil && bin != "":
		return bin, nil
	case err != nil && (errors.Is(err, ErrRefused) || goErr != nil || ctx.Err() != nil):
		return "", err
	case err != nil:
		b.log().Infof("could not fetch nuv's release of %s (%v): building it from source instead", p.Name, err)
	}
	return b.BuildSource(ctx, p, offline)
}

// BuildSource returns a cached build of p, one of the Kubernetes programs above, or builds it
// (offline: with the module cache only); never a release archive. Where Go is missing, a build of
// these very sources made by any Go version will do.
func (b Builder) BuildSource(ctx context.Context, p Program, offline bool) (string, error) {
	if _, err := runner.FindGo(b.getenv()); err != nil {
		if bin := b.Any(p); bin != "" {
			return bin, nil
		}
		return "", fmt.Errorf("nuv builds its Kubernetes components (%s) once with Go: %w (or set NUV_KUBE_BIN to a prebuilt nuv-kube)", p.Name, err)
	}
	return b.Build(ctx, p, offline)
}
