// Command nuv-kube is the companion binary that runs the Kubernetes components of nuv's local clusters.
package main

import (
	"fmt"

	_ "go.etcd.io/etcd/server/v3/embed"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "sigs.k8s.io/kwok/pkg/kwok/cmd"
)

func main() { fmt.Println("ok") }
