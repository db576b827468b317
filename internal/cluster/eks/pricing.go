package eks

import (
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

var _ cluster.Priced = (*Provider)(nil)

// Machines says what a planned resource runs, for the plan's cost estimate: a managed node
// group's desired count of its first instance type (the one EKS launches on demand). Spot groups
// are priced on demand too: the estimate is an upper bound for them.
func (p *Provider) Machines(c *spec.Cluster, r cluster.Resource) []cluster.Machines {
	if r.Kind != kindNodeGroup {
		return nil
	}
	types := strings.Split(r.Fields["instanceTypes"], ",")
	n, err := strconv.Atoi(r.Fields["desired"])
	if types[0] == "" || err != nil || n <= 0 {
		return nil
	}
	m := awsnet.PricedMachine(c, p.getenv, sectionOf(c).Endpoint)
	m.Type, m.Count = types[0], n
	return []cluster.Machines{m}
}
