// Package nuv embeds the sources nuv needs to build its companion binary, nuv-kube, on a machine that
// has Go but not the nuv source tree: the module's go.mod and go.sum (which pin the Kubernetes, etcd
// and kwok versions) and the companion's main package. go:embed cannot reach parent directories, so
// this file sits at the module root.
package nuv

import "embed"

// KubeSources holds go.mod, go.sum and cmd/nuv-kube/*.go. Written out to a directory they form a
// module that `go build ./cmd/nuv-kube` compiles with dependencies from the module proxy.
//
//go:embed go.mod go.sum cmd/nuv-kube/*.go
var KubeSources embed.FS
