package eks

import (
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

var _ cluster.Priced = (*Provider)(nil)

// Machines says what a planned resource runs, for the plan's cost estimate: a managed node
// group's desired count of its first instance type (the one EKS launches on demand), a machine of
// the self-managed provider (control plane, worker, etcd or load balancer instance). Spot groups
// are priced on demand too: the estimate is an upper bound for them.
func (p *Provider) Machines(c *spec.Cluster, r cluster.Resource) []cluster.Machines {
	region := c.Spec.Region
	for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION"} {
		if region == "" {
			region = p.getenv(k)
		}
	}
	endpoint := sectionOf(c).Endpoint
	m := cluster.Machines{Cloud: "aws", Region: region, Endpoint: endpoint}
	switch r.Kind {
	case kindNodeGroup:
		types := strings.Split(r.Fields["instanceTypes"], ",")
		n, err := strconv.Atoi(r.Fields["desired"])
		if types[0] == "" || err != nil || n <= 0 {
			return nil
		}
		m.Type, m.Count = types[0], n
	case kindInstance:
		if r.Fields["instanceType"] == "" {
			return nil
		}
		m.Type, m.Count = r.Fields["instanceType"], 1
	default:
		return nil
	}
	return []cluster.Machines{m}
}
