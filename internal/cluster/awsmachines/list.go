package awsmachines

import (
	"context"
	"fmt"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// listMachines reports the self-managed clusters whose machines run in the account and region
// s looks in: instances carrying nuv's cluster and role tags, by cluster (name "" for all).
func (p *Provider) listMachines(ctx context.Context, s *session, name string) ([]cluster.Info, error) {
	filters := []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{TagRole}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped"}}}
	if name != "" {
		filters = append(filters, ec2types.Filter{Name: aws.String("tag:" + awsnet.TagCluster), Values: []string{name}})
	} else {
		filters = append(filters, ec2types.Filter{Name: aws.String("tag-key"), Values: []string{awsnet.TagCluster}})
	}
	by := map[string]*cluster.Info{}
	pg := ec2.NewDescribeInstancesPaginator(s.EC2, &ec2.DescribeInstancesInput{Filters: filters})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("ec2:DescribeInstances: %s", awsnet.APIMessage(err))
		}
		for _, r := range page.Reservations {
			for _, in := range r.Instances {
				t := awsnet.TagsOf(in.Tags)
				n := t[awsnet.TagCluster]
				info := by[n]
				if info == nil {
					info = &cluster.Info{Name: n, Provider: Name, Flavor: "kubeadm", Status: cluster.Running, NodesReady: -1}
					by[n] = info
				}
				if in.LaunchTime != nil && (info.Created.IsZero() || in.LaunchTime.Before(info.Created)) {
					info.Created = *in.LaunchTime
				}
				role := t[TagRole]
				if role == RoleControlPlane || role == RoleWorker {
					info.Nodes++
				}
				running := in.State != nil && in.State.Name == ec2types.InstanceStateNameRunning
				if !running {
					info.Status = cluster.Degraded
				}
				info.Components = append(info.Components, cluster.Component{Name: t[awsnet.TagResource] + " (" + string(in.State.Name) + ")", Running: running})
			}
		}
	}
	var out []cluster.Info
	for _, n := range slices.Sorted(maps.Keys(by)) {
		info := by[n]
		slices.SortFunc(info.Components, func(a, b cluster.Component) int { return strings.Compare(a.Name, b.Name) })
		cps := 0
		for _, c := range info.Components {
			if strings.HasPrefix(c.Name, awsnet.Key(kindInstance, RoleControlPlane)) {
				cps++
			}
		}
		info.HA = cps > 1
		if _, err := os.Stat(p.KubeconfigPath(n)); err == nil {
			info.Kubeconfig = p.KubeconfigPath(n)
			if info.Status == cluster.Running {
				info.NodesReady = kit.ReadyCount(ctx, p.KubeconfigPath(n))
			}
		}
		out = append(out, *info)
	}
	return out, nil
}

// statusMachines is Status for a self-managed cluster.
func (p *Provider) statusMachines(ctx context.Context, c *spec.Cluster) (cluster.Info, error) {
	name := c.Metadata.Name
	sec := sectionOf(c)
	if !p.configured() && sec.Endpoint == "" && sec.Profile == "" {
		return cluster.Info{}, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
	}
	ctx, cancel := context.WithTimeout(ctx, awsnet.ListTimeout)
	defer cancel()
	s, err := p.session(ctx, c, sec)
	if err != nil {
		return cluster.Info{}, err
	}
	infos, err := p.listMachines(ctx, s, name)
	if err != nil {
		return cluster.Info{}, err
	}
	if len(infos) == 0 {
		return cluster.Info{}, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
	}
	return infos[0], nil
}
