package kubebin

import (
	"fmt"
	neturl "net/url"
	"strings"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// Mirrors are the base URLs the release files are fetched from: the upstream hosts by default, a
// mirror of their layout when set.
type Mirrors struct {
	Kubernetes string // dl.k8s.io layout: <base>/release/v<ver>/bin/<os>/<arch>/<name>
	Etcd       string // GitHub release assets: <base>/v<ver>/etcd-v<ver>-<os>-<arch>.tar.gz
	Kwok       string // GitHub release assets: <base>/v<ver>/kwok-<os>-<arch>
}

// Mirror settings, read by MirrorsFromEnv.
const (
	EnvKubernetesMirror = "NUV_KUBE_MIRROR"
	EnvEtcdMirror       = "NUV_ETCD_MIRROR"
	EnvKwokMirror       = "NUV_KWOK_MIRROR"
)

// DefaultMirrors are the official release hosts.
func DefaultMirrors() Mirrors {
	return Mirrors{
		Kubernetes: "https://dl.k8s.io",
		Etcd:       "https://github.com/etcd-io/etcd/releases/download",
		Kwok:       "https://github.com/kubernetes-sigs/kwok/releases/download",
	}
}

// MirrorsFromEnv returns the default mirrors with each one replaced by its setting when set
// ($NUV_KUBE_MIRROR, $NUV_ETCD_MIRROR, $NUV_KWOK_MIRROR). A setting that is not an https URL is an
// error naming it: binaries are only fetched over TLS.
func MirrorsFromEnv(getenv func(string) string) (Mirrors, error) {
	m := DefaultMirrors()
	for _, s := range []struct {
		env string
		dst *string
	}{{EnvKubernetesMirror, &m.Kubernetes}, {EnvEtcdMirror, &m.Etcd}, {EnvKwokMirror, &m.Kwok}} {
		v := getenv(s.env)
		if v == "" {
			continue
		}
		u, err := neturl.Parse(v)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return Mirrors{}, fmt.Errorf("%s=%q: want an https:// base URL (nuv fetches binaries over TLS only)", s.env, v)
		}
		*s.dst = strings.TrimRight(v, "/")
	}
	return m, nil
}

// artifact is one file to download for one component on one platform.
type artifact struct {
	Component string
	URL       string
	// SumsURL is the release's checksum file ("" when the release publishes none: the pin is the
	// only check). SumsName is the file's name in a multi-line sums file ("" for a file holding
	// just this file's sum).
	SumsURL, SumsName string
	// Member is the path of the binary inside a .tar.gz or .zip archive ("" when URL is the binary).
	Member string
}

// platformsOf lists where each component has official binaries.
var platformsOf = lazy.Value[map[string][]string]{New: func() map[string][]string {
	return map[string][]string{
		"kube-apiserver":          {"linux/amd64", "linux/arm64"},
		"kube-controller-manager": {"linux/amd64", "linux/arm64"},
		"kube-scheduler":          {"linux/amd64", "linux/arm64"},
		"etcd":                    {"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"},
		"kwok":                    {"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"},
	}
}}

// artifacts returns the files of a release for a platform; a platform some component has no
// official binary for is an error naming both.
func artifacts(r Release, m Mirrors, goos, goarch string) ([]artifact, error) {
	plat := goos + "/" + goarch
	var out []artifact
	for _, c := range Components {
		found := false
		for _, p := range platformsOf.Get()[c] {
			found = found || p == plat
		}
		if !found {
			return nil, fmt.Errorf("%s publishes no %s binary for %s (it has %s)", publisher(c), c, plat, strings.Join(platformsOf.Get()[c], ", "))
		}
		switch c {
		case "etcd":
			ext := ".tar.gz"
			if goos == "darwin" {
				ext = ".zip"
			}
			base := fmt.Sprintf("etcd-v%s-%s-%s", r.Etcd, goos, goarch)
			out = append(out, artifact{Component: c,
				URL:     fmt.Sprintf("%s/v%s/%s%s", m.Etcd, r.Etcd, base, ext),
				SumsURL: fmt.Sprintf("%s/v%s/SHA256SUMS", m.Etcd, r.Etcd), SumsName: base + ext,
				Member: base + "/etcd"})
		case "kwok":
			out = append(out, artifact{Component: c, URL: fmt.Sprintf("%s/v%s/kwok-%s-%s", m.Kwok, r.Kwok, goos, goarch)})
		default:
			u := fmt.Sprintf("%s/release/v%s/bin/%s/%s/%s", m.Kubernetes, r.Kubernetes, goos, goarch, c)
			out = append(out, artifact{Component: c, URL: u, SumsURL: u + ".sha256"})
		}
	}
	return out, nil
}

func publisher(component string) string {
	switch component {
	case "etcd":
		return "etcd"
	case "kwok":
		return "kwok"
	}
	return "Kubernetes"
}
