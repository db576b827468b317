//go:build !nuvkube_kwok

package main

import (
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

// controlPlaneUsage lists the control-plane components this build runs.
const controlPlaneUsage = "etcd|kube-apiserver|kube-controller-manager|kube-scheduler|"

// runControlPlane runs a control-plane component; ok is false for any other name.
func runControlPlane(name string, args []string) (code int, ok bool) {
	switch name {
	case "etcd":
		return runEtcd(args), true
	case "kube-apiserver":
		cmd := apiserver.NewAPIServerCommand()
		cmd.SetArgs(args)
		return cli.Run(cmd), true
	case "kube-controller-manager":
		cmd := controllermanager.NewControllerManagerCommand()
		cmd.SetArgs(args)
		return cli.Run(cmd), true
	case "kube-scheduler":
		cmd := scheduler.NewSchedulerCommand()
		cmd.SetArgs(args)
		return cli.Run(cmd), true
	}
	return 0, false
}
