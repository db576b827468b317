package gke

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// Compute Engine's predefined machine types, by series: the shapes (standard, highmem, highcpu)
// and their vCPU counts. A machine type outside this table is refused at plan time; whether a zone
// offers it is the API's answer at apply time (GKE's INVALID_ARGUMENT, reported with the field).
var machineSeries = lazy.Value[map[string]map[string][]int]{New: func() map[string]map[string][]int {
	return map[string]map[string][]int{
		"e2":  {"standard": {2, 4, 8, 16, 32}, "highmem": {2, 4, 8, 16}, "highcpu": {2, 4, 8, 16, 32}},
		"n1":  {"standard": {1, 2, 4, 8, 16, 32, 64, 96}, "highmem": {2, 4, 8, 16, 32, 64, 96}, "highcpu": {2, 4, 8, 16, 32, 64, 96}},
		"n2":  {"standard": {2, 4, 8, 16, 32, 48, 64, 80, 96, 128}, "highmem": {2, 4, 8, 16, 32, 48, 64, 80, 96, 128}, "highcpu": {2, 4, 8, 16, 32, 48, 64, 80, 96}},
		"n2d": {"standard": {2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224}, "highmem": {2, 4, 8, 16, 32, 48, 64, 80, 96}, "highcpu": {2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224}},
		"n4":  {"standard": {2, 4, 8, 16, 32, 48, 64, 80}, "highmem": {2, 4, 8, 16, 32, 48, 64, 80}, "highcpu": {2, 4, 8, 16, 32, 48, 64, 80}},
		"c2d": {"standard": {2, 4, 8, 16, 32, 56, 112}, "highmem": {2, 4, 8, 16, 32, 56, 112}, "highcpu": {2, 4, 8, 16, 32, 56, 112}},
		"c3":  {"standard": {4, 8, 22, 44, 88, 176}, "highmem": {4, 8, 22, 44, 88, 176}, "highcpu": {4, 8, 22, 44, 88, 176}},
		"c4":  {"standard": {2, 4, 8, 16, 32, 48, 96, 192}, "highmem": {2, 4, 8, 16, 32, 48, 96, 192}, "highcpu": {2, 4, 8, 16, 32, 48, 96, 192}},
		"t2d": {"standard": {1, 2, 4, 8, 16, 32, 48, 60}},
		"g2":  {"standard": {4, 8, 12, 16, 24, 32, 48, 96}},
	}
}}

// sharedCore are the shared-core types of the e2 series.
var sharedCore = []string{"e2-micro", "e2-small", "e2-medium"}

var customRE = lazy.MustCompile(`^(?:(e2|n2|n2d|n4)-)?custom-(\d+)-(\d+)$`)

// checkMachineType reports why machineType is not a Compute Engine machine type, or nil.
func checkMachineType(mt string) error {
	if slices.Contains(sharedCore, mt) || customRE.MatchString(mt) {
		return nil
	}
	parts := strings.SplitN(mt, "-", 3)
	if len(parts) == 3 {
		if shapes, ok := machineSeries.Get()[parts[0]]; ok {
			if cpus, ok := shapes[parts[1]]; ok {
				if n, err := strconv.Atoi(parts[2]); err == nil && slices.Contains(cpus, n) {
					return nil
				}
				return fmt.Errorf("machine type %q does not exist: %s-%s comes with %s vCPUs", mt, parts[0], parts[1], joinInts(cpus))
			}
			return fmt.Errorf("machine type %q does not exist: series %s has shapes %s", mt, parts[0], strings.Join(sortedKeys(shapes), ", "))
		}
	}
	return fmt.Errorf("machine type %q is not a Compute Engine machine type (e.g. e2-standard-4, n2-highmem-8, e2-medium; series %s)", mt, strings.Join(sortedKeys(machineSeries.Get()), ", "))
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
