// Command nuv-node is the multi-call binary of the kind node images nuv assembles offline (`nuv
// cluster node-image build`). It dispatches on the name it is run as (argv[0], so that a symlink
// /usr/bin/kubelet -> nuv-node is the kubelet), or on its first argument:
//
//	kubelet, kubeadm, kubectl, kube-proxy      k8s.io/kubernetes/cmd/...
//	kube-apiserver, kube-controller-manager,
//	kube-scheduler                             the control-plane images' entry points
//	etcd                                       go.etcd.io/etcd/server/v3/etcdmain (upstream flags)
//	nuv-podnet                                 pod networking across nodes (internal/cluster/nodeimage/podnet)
//	version                                    the Kubernetes version it was built from
//
// nuv builds it from the sources embedded in nuv (kubesrc.go) in the same cached build as nuv-kube.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/component-base/version"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubeadm "k8s.io/kubernetes/cmd/kubeadm/app"
	kubeadmerrors "k8s.io/kubernetes/cmd/kubeadm/app/util/errors"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"

	"github.com/nuv-dev/nuv/internal/cluster/nodeimage/podnet"
)

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args[1:]
	if name == "nuv-node" || name == "main" {
		if len(args) == 0 {
			usage()
			os.Exit(2)
		}
		name, args = args[0], args[1:]
	}
	// The upstream commands parse os.Args themselves (cobra, etcd's flag set): present them the
	// command line they expect.
	os.Args = append([]string{name}, args...)
	os.Exit(run(name, args))
}

func run(name string, args []string) int {
	switch name {
	case "kubelet":
		cmd := kubelet.NewKubeletCommand(context.Background())
		cmd.SetArgs(args)
		return cli.Run(cmd)
	case "kubeadm":
		kubeadmerrors.HandleError(kubeadm.Run())
		return 0
	case "kubectl":
		logs.GlogSetter(kubectlcmd.GetLogVerbosity(os.Args)) //nolint:errcheck
		cmd := kubectlcmd.NewDefaultKubectlCommand()
		if err := cli.RunNoErrOutput(cmd); err != nil {
			kubectlutil.CheckErr(err)
		}
		return 0
	case "kube-proxy":
		cmd := proxy.NewProxyCommand()
		cmd.SetArgs(args)
		return cli.Run(cmd)
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
	case "etcd":
		etcdmain.Main(os.Args)
		return 0
	case "nuv-podnet":
		return podnet.Main(args)
	case "version":
		fmt.Println(version.Get().GitVersion)
		return 0
	case "-h", "--help", "help":
		usage()
		return 0
	}
	fmt.Fprintf(os.Stderr, "nuv-node: unknown command %q\n", name)
	usage()
	return 2
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: nuv-node kubelet|kubeadm|kubectl|kube-proxy|kube-apiserver|kube-controller-manager|kube-scheduler|etcd|nuv-podnet|version [flags]")
}
