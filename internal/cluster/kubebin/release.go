// Package kubebin gets the official release binaries of the Kubernetes components nuv's local
// clusters run (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok) from their
// release downloads, or from a mirror of them: over TLS, through the standard proxy variables,
// resumable, bounded in time, each file verified against the checksum file its release publishes
// beside it and against the checksum nuv pins for it (when nuv ships one), and published into the
// cache as a complete directory or not at all.
//
// The download layouts are the upstream ones, so a corporate mirror that copies them works by
// setting the base URLs (Mirrors):
//
//	Kubernetes  <base>/release/v1.36.3/bin/linux/amd64/kube-apiserver  and  kube-apiserver.sha256
//	etcd        <base>/v3.6.16/etcd-v3.6.16-linux-amd64.tar.gz          and  <base>/v3.6.16/SHA256SUMS
//	kwok        <base>/v0.8.0/kwok-linux-amd64                           (no checksum file: pinned only)
package kubebin

import (
	"fmt"
	"sort"
	"strings"
)

// Components are the binaries of a set, by the name the local provider runs them as.
var Components = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

// Release is one Kubernetes version nuv knows how to download: the etcd and kwok versions that go
// with it and the SHA-256 sums nuv pins for its files.
type Release struct {
	Kubernetes string // "1.36.3"
	Etcd       string // "3.6.16"
	Kwok       string // "0.8.0"
	// Pins maps PinKey(component, goos, goarch) to the SHA-256 (hex) of the file downloaded for it:
	// the binary itself, or the etcd release archive. A download must match the release's own
	// checksum file and, when an entry exists here, this pin too.
	Pins map[string]string
}

// PinKey is the key of Release.Pins: "kube-apiserver linux/amd64".
func PinKey(component, goos, goarch string) string {
	return component + " " + goos + "/" + goarch
}

// releases is the table nuv ships. The component versions are those go.mod pins for the source
// build (k8s.io/kubernetes, go.etcd.io/etcd/server/v3, sigs.k8s.io/kwok).
//
// Maintainers: pin a file by adding its "component os/arch" entry with the sum the release
// publishes, copied from the release page over a trusted network (dl.k8s.io's <binary>.sha256,
// etcd's SHA256SUMS; kwok publishes no checksum file, so its pin is the only check: without one a
// kwok download is refused, and the companion builds kwok alone from source instead). The entries
// are left empty until someone with access to the release hosts fills them: nuv does not make them
// up.
var releases = []Release{
	{Kubernetes: "1.36.3", Etcd: "3.6.16", Kwok: "0.8.0", Pins: map[string]string{}},
}

// Releases returns the releases nuv ships, in table order.
func Releases() []Release { return append([]Release(nil), releases...) }

// Find returns the release of Kubernetes version v ("1.36.3" or "v1.36.3") from table; an unknown
// version is an error listing the versions the table has.
func Find(table []Release, v string) (Release, error) {
	v = strings.TrimPrefix(v, "v")
	var known []string
	for _, r := range table {
		if r.Kubernetes == v {
			return r, nil
		}
		known = append(known, r.Kubernetes)
	}
	sort.Strings(known)
	return Release{}, fmt.Errorf("nuv has no download entry (versions and checksums) for Kubernetes %q: it has them for %s", v, strings.Join(known, ", "))
}
