package aks

import (
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

var _ cluster.Priced = (*Provider)(nil)

// Machines says what a planned resource runs, for the plan's cost estimate: the managed
// cluster's system pool and each further agent pool, as their node count (the autoscaler's
// minimum when the count is left to it) of their VM size.
func (p *Provider) Machines(c *spec.Cluster, r cluster.Resource) []cluster.Machines {
	prefix := ""
	switch r.Kind {
	case kindCluster:
		prefix = "systemPool."
	case kindPool:
	default:
		return nil
	}
	size := r.Fields[prefix+"vmSize"]
	n, err := strconv.Atoi(r.Fields[prefix+"count"])
	if err != nil {
		lo, _, _ := strings.Cut(r.Fields[prefix+"autoscale"], "-")
		n, err = strconv.Atoi(lo)
	}
	if size == "" || err != nil || n <= 0 {
		return nil
	}
	region := strings.ToLower(strings.ReplaceAll(c.Spec.Region, " ", ""))
	return []cluster.Machines{{Cloud: "azure", Region: region, Type: size, Count: n}}
}
