// Package nuv embeds the sources nuv needs to build its companion binary, nuv-kube, on a machine that
// has Go but not the nuv source tree: the module's go.mod and go.sum (which pin the Kubernetes, etcd
// and kwok versions) and the companion's main package. go:embed cannot reach parent directories, so
// this file sits at the module root.
package nuv

import "embed"

// KubeSources holds go.mod, go.sum and the programs nuv builds from source in one cached build:
// cmd/nuv-kube (local clusters' components), cmd/nuv-node (the binaries of the kind node images
// nuv assembles, with the pod network of internal/cluster/nodeimage/podnet) and cmd/nuv-pause (their
// pod sandbox). Written out to a directory they form a module that `go build ./cmd/<program>`
// compiles with dependencies from the module proxy.
//
//go:embed go.mod go.sum cmd/nuv-kube/*.go cmd/nuv-node/*.go cmd/nuv-pause/*.go internal/cluster/nodeimage/podnet/*.go
var KubeSources embed.FS
