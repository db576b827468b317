package gke

import (
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/lazy"
)

var _ cluster.Priced = (*Provider)(nil)

// memoryPerCPU is the GiB of memory per vCPU of each series' shapes: Compute Engine prices a
// predefined machine type as its vCPUs and its memory.
var memoryPerCPU = lazy.Value[map[string]map[string]float64]{New: func() map[string]map[string]float64 {
	std := map[string]float64{"standard": 4, "highmem": 8, "highcpu": 1}
	two := map[string]float64{"standard": 4, "highmem": 8, "highcpu": 2}
	return map[string]map[string]float64{
		"e2": std, "n2": std, "n2d": std, "t2d": std, "g2": std,
		"n1": {"standard": 3.75, "highmem": 6.5, "highcpu": 0.9},
		"n4": two, "c2d": two, "c3": two,
		"c4": {"standard": 3.75, "highmem": 7.75, "highcpu": 2},
	}
}}

// sharedCoreShape are the e2 shared-core types: the fraction of a vCPU they get and their memory.
var sharedCoreShape = lazy.Value[map[string][2]float64]{New: func() map[string][2]float64 {
	return map[string][2]float64{"e2-micro": {0.25, 1}, "e2-small": {0.5, 2}, "e2-medium": {1, 4}}
}}

// machineShape returns the vCPUs and GiB of memory of a predefined machine type (0, 0 for a
// custom or unknown one).
func machineShape(mt string) (cpus, gib float64) {
	if s, ok := sharedCoreShape.Get()[mt]; ok {
		return s[0], s[1]
	}
	parts := strings.SplitN(mt, "-", 3)
	if len(parts) != 3 {
		return 0, 0
	}
	per, ok := memoryPerCPU.Get()[parts[0]][parts[1]]
	n, err := strconv.Atoi(parts[2])
	if !ok || err != nil {
		return 0, 0
	}
	return float64(n), float64(n) * per
}

// Machines says what a planned node pool runs, for the plan's cost estimate: its count (the
// autoscaler's minimum when the count is left to it) in each of its zones (three for a regional
// pool whose zones GKE picks) of its machine type.
func (p *Provider) Machines(c *spec.Cluster, r cluster.Resource) []cluster.Machines {
	if r.Kind != "node-pool" || r.Fields["machineType"] == "" {
		return nil
	}
	n, err := strconv.Atoi(r.Fields["count"])
	if err != nil {
		lo, _, _ := strings.Cut(r.Fields["autoscaling"], "..")
		n, err = strconv.Atoi(lo)
	}
	if err != nil || n <= 0 {
		return nil
	}
	loc := p.section(c).Location
	zones := 1
	if z := r.Fields["zones"]; z != "" {
		zones = len(strings.Split(z, ","))
	} else if !zoneRE.MatchString(loc) {
		zones = 3
	}
	cpus, gib := machineShape(r.Fields["machineType"])
	return []cluster.Machines{{Cloud: "gcp", Region: regionOf(loc), Type: r.Fields["machineType"], Count: n * zones, VCPUs: cpus, MemoryGiB: gib}}
}
