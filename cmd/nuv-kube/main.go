// Command nuv-kube is the companion binary that runs the Kubernetes components of nuv's local
// clusters. nuv builds it on first use (it links k8s.io/kubernetes, etcd and kwok, which nuv itself
// must not: they cost ~90 ms and ~125 MB at every start) and starts one process per component:
//
//	nuv-kube etcd --config FILE            an etcd 3.6 member (go.etcd.io/etcd/server/v3/embed)
//	nuv-kube kube-apiserver FLAGS...       k8s.io/kubernetes/cmd/kube-apiserver
//	nuv-kube kube-controller-manager ...   k8s.io/kubernetes/cmd/kube-controller-manager
//	nuv-kube kube-scheduler FLAGS...       k8s.io/kubernetes/cmd/kube-scheduler
//	nuv-kube kwok FLAGS...                 sigs.k8s.io/kwok: fake kubelets driven by stages
//	nuv-kube lb --listen ADDR --backend ADDR...   the TCP balancer in front of HA apiservers
//	nuv-kube version                       the Kubernetes version it was built from
//
// The component flags are those of the upstream binaries. Built with the tag nuvkube_kwok it holds
// kwok only (no control plane): nuv installs that build as the kwok of a downloaded binary set, since
// kwok's releases publish no checksums nuv could verify a download against.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/component-base/version"
)

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args[1:]
	if name == "nuv-kube" || name == "main" {
		if len(args) == 0 {
			usage()
			os.Exit(2)
		}
		name, args = args[0], args[1:]
	}
	// Upstream commands parse os.Args themselves in places (kwok's config flags): present them the
	// command line they expect.
	os.Args = append([]string{name}, args...)
	os.Exit(run(name, args))
}

func run(name string, args []string) int {
	if code, ok := runControlPlane(name, args); ok {
		return code
	}
	switch name {
	case "kwok":
		return runKwok(args)
	case "lb":
		return runLB(args)
	case "version":
		fmt.Println(version.Get().GitVersion)
		return 0
	case "-h", "--help", "help":
		usage()
		return 0
	}
	fmt.Fprintf(os.Stderr, "nuv-kube: unknown component %q\n", name)
	usage()
	return 2
}

func usage() {
	fmt.Fprintf(os.Stderr, "usage: nuv-kube %skwok|lb|version [flags]\n", controlPlaneUsage)
}
