package gcp

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// regions are the locations the emulator offers: each region and its zones.
var regions = lazy.Value[map[string][]string]{New: func() map[string][]string {
	return map[string][]string{
		"us-central1":  {"us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"},
		"us-east1":     {"us-east1-b", "us-east1-c", "us-east1-d"},
		"europe-west1": {"europe-west1-b", "europe-west1-c", "europe-west1-d"},
		"asia-east1":   {"asia-east1-a", "asia-east1-b", "asia-east1-c"},
	}
}}

// regionOf returns the region of a location (a region or a zone) and whether it exists.
func regionOf(loc string) (string, bool) {
	if _, ok := regions.Get()[loc]; ok {
		return loc, true
	}
	for r, zones := range regions.Get() {
		if slices.Contains(zones, loc) {
			return r, true
		}
	}
	return "", false
}

// isZone reports whether loc is a zone the emulator offers.
func isZone(loc string) bool {
	r, ok := regionOf(loc)
	return ok && r != loc
}

// machineShapes are the machine types of each series (GCE's predefined shapes).
var machineShapes = lazy.Value[map[string][]string]{New: func() map[string][]string {
	return map[string][]string{
		"e2":  {"micro", "small", "medium", "standard-2", "standard-4", "standard-8", "standard-16", "standard-32", "highmem-2", "highmem-4", "highmem-8", "highmem-16", "highcpu-2", "highcpu-4", "highcpu-8", "highcpu-16", "highcpu-32"},
		"n1":  {"standard-1", "standard-2", "standard-4", "standard-8", "standard-16", "standard-32", "standard-64", "standard-96", "highmem-2", "highmem-4", "highmem-8", "highcpu-4", "highcpu-8"},
		"n2":  {"standard-2", "standard-4", "standard-8", "standard-16", "standard-32", "standard-48", "standard-64", "standard-80", "standard-96", "standard-128", "highmem-2", "highmem-4", "highmem-8", "highcpu-8", "highcpu-16"},
		"n2d": {"standard-2", "standard-4", "standard-8", "standard-16", "standard-32", "standard-64", "highmem-2", "highmem-4", "highcpu-8"},
		"c3":  {"standard-4", "standard-8", "standard-22", "standard-44", "standard-88", "standard-176"},
		"t2d": {"standard-1", "standard-2", "standard-4", "standard-8", "standard-16", "standard-32", "standard-48", "standard-60"},
		"c2d": {"standard-2", "standard-4", "standard-8", "standard-16", "standard-32"},
		"n4":  {"standard-2", "standard-4", "standard-8", "standard-16", "standard-32"},
		"g2":  {"standard-4", "standard-8", "standard-12", "standard-16"},
		"c4":  {"standard-2", "standard-4", "standard-8", "standard-16"},
	}
}}

// seriesNotIn lists series a zone does not offer (as on GCE, not every series is everywhere).
var seriesNotIn = lazy.Value[map[string][]string]{New: func() map[string][]string {
	return map[string][]string{
		"asia-east1-a":   {"c3", "c4", "g2"},
		"europe-west1-d": {"t2d"},
		"us-east1-d":     {"g2"},
	}
}}

// machineTypeOffered checks that machineType exists and is offered in every zone of zones.
func machineTypeOffered(machineType string, zones []string) error {
	series, shape, ok := strings.Cut(machineType, "-")
	if !ok || !slices.Contains(machineShapes.Get()[series], shape) {
		return fmt.Errorf("Invalid machine type %q: no such machine type in Compute Engine", machineType)
	}
	for _, z := range zones {
		if slices.Contains(seriesNotIn.Get()[z], series) {
			return fmt.Errorf("Machine type %q is not available in zone %q", machineType, z)
		}
	}
	return nil
}

// gkeVersions are the GKE versions the emulator offers, newest first. Every control plane really
// runs the local provider's Kubernetes version (see LocalClusters); the GKE version is what the
// API reports.
var gkeVersions = []string{
	"1.36.3-gke.1100000",
	"1.36.2-gke.1500000",
	"1.35.7-gke.1200000",
	"1.35.6-gke.1000000",
	"1.34.9-gke.1300000",
}

const defaultVersion = "1.35.7-gke.1200000"

// releaseChannel is a release channel's default and valid versions.
type releaseChannel struct {
	def   string
	valid []string
}

// channels are the release channels: their default and valid versions.
var channels = lazy.Value[map[containerpb.ReleaseChannel_Channel]releaseChannel]{New: func() map[containerpb.ReleaseChannel_Channel]releaseChannel {
	return map[containerpb.ReleaseChannel_Channel]releaseChannel{
		containerpb.ReleaseChannel_RAPID:    {"1.36.3-gke.1100000", []string{"1.36.3-gke.1100000", "1.36.2-gke.1500000", "1.35.7-gke.1200000"}},
		containerpb.ReleaseChannel_REGULAR:  {"1.35.7-gke.1200000", []string{"1.36.2-gke.1500000", "1.35.7-gke.1200000", "1.35.6-gke.1000000", "1.34.9-gke.1300000"}},
		containerpb.ReleaseChannel_STABLE:   {"1.34.9-gke.1300000", []string{"1.35.6-gke.1000000", "1.34.9-gke.1300000"}},
		containerpb.ReleaseChannel_EXTENDED: {"1.34.9-gke.1300000", []string{"1.35.6-gke.1000000", "1.34.9-gke.1300000"}},
	}
}}

// resolveVersion turns what a request asks for ("", "-", "latest", "1.35", "1.35.7", a full GKE
// version) into an offered version, within channel's versions when a channel is set.
func resolveVersion(want string, ch containerpb.ReleaseChannel_Channel) (string, bool) {
	offered := gkeVersions
	def := defaultVersion
	if c, ok := channels.Get()[ch]; ok {
		offered, def = c.valid, c.def
	}
	switch want {
	case "", "-":
		return def, true
	case "latest":
		return offered[0], true
	}
	want = strings.TrimPrefix(want, "v")
	for _, v := range offered { // newest first: the first match is the newest patch
		if v == want || strings.HasPrefix(v, want+".") || strings.HasPrefix(v, want+"-") {
			return v, true
		}
	}
	return "", false
}

// compareVersions orders GKE versions (1.35.7-gke.1200000): -1, 0 or 1.
func compareVersions(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func versionParts(v string) [4]int {
	var out [4]int
	base, gke, _ := strings.Cut(v, "-gke.")
	for i, p := range strings.SplitN(base, ".", 3) {
		out[i], _ = strconv.Atoi(p)
	}
	out[3], _ = strconv.Atoi(gke)
	return out
}

// serverConfig is what GetServerConfig answers for any offered location.
func serverConfig() *containerpb.ServerConfig {
	sc := &containerpb.ServerConfig{
		DefaultClusterVersion: defaultVersion,
		ValidMasterVersions:   slices.Clone(gkeVersions),
		ValidNodeVersions:     slices.Clone(gkeVersions),
		DefaultImageType:      "COS_CONTAINERD",
		ValidImageTypes:       []string{"COS_CONTAINERD", "UBUNTU_CONTAINERD"},
	}
	for _, ch := range []containerpb.ReleaseChannel_Channel{containerpb.ReleaseChannel_RAPID, containerpb.ReleaseChannel_REGULAR, containerpb.ReleaseChannel_STABLE, containerpb.ReleaseChannel_EXTENDED} {
		c := channels.Get()[ch]
		sc.Channels = append(sc.Channels, &containerpb.ServerConfig_ReleaseChannelConfig{Channel: ch, DefaultVersion: c.def, ValidVersions: slices.Clone(c.valid)})
	}
	return sc
}
