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
// The component flags are those of the upstream binaries.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/component-base/version"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
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
	switch name {
	case "etcd":
		return runEtcd(args)
	case "kube-apiserver":
		cmd := apiserver.NewAPIServerCommand()
		cmd.SetArgs(args)
		return cli.Run(cmd)
	case "kube-controller-manager":
		cmd := controllermanager.NewControllerManagerCommand()
		cmd.SetArgs(args)
		return cli.Run(cmd)
	case "kube-scheduler":
		cmd := scheduler.NewSchedulerCommand()
		cmd.SetArgs(args)
		return cli.Run(cmd)
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
	fmt.Fprintln(os.Stderr, "usage: nuv-kube etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kwok|lb|version [flags]")
}
