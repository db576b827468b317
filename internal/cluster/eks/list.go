package eks

import (
	"context"
	"errors"
	"fmt"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// List reports the EKS clusters nuv made (tagged nuv.dev/cluster) in the environment's account
// and region.
func (p *Provider) List(ctx context.Context) ([]cluster.Info, error) {
	return awsnet.InEnvironment(ctx, p.getenv, p.envSession, p.list)
}

func (p *Provider) list(ctx context.Context, s *session) ([]cluster.Info, error) {
	var out []cluster.Info
	pg := eks.NewListClustersPaginator(s.eks, &eks.ListClustersInput{})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("eks:ListClusters: %s", awsnet.APIMessage(err))
		}
		for _, n := range page.Clusters {
			info, err := p.status(ctx, s, n)
			if errors.Is(err, cluster.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			out = append(out, info)
		}
	}
	return out, nil
}

// Status reports one EKS cluster nuv made, in the region and account its spec names (the
// environment's for a cluster without a record).
func (p *Provider) Status(ctx context.Context, c *spec.Cluster) (cluster.Info, error) {
	name, sec := c.Metadata.Name, sectionOf(c)
	if !p.configured() && sec.Endpoint == "" && sec.Profile == "" {
		return cluster.Info{}, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
	}
	ctx, cancel := context.WithTimeout(ctx, awsnet.ListTimeout)
	defer cancel()
	s, err := p.session(ctx, c, sec)
	if err != nil {
		return cluster.Info{}, err
	}
	return p.status(ctx, s, name)
}

func (p *Provider) status(ctx context.Context, s *session, name string) (cluster.Info, error) {
	out, err := s.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)})
	if awsnet.APICode(err) == "ResourceNotFoundException" {
		return cluster.Info{}, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
	}
	if err != nil {
		return cluster.Info{}, fmt.Errorf("eks:DescribeCluster %s: %s", name, awsnet.APIMessage(err))
	}
	cl := out.Cluster
	if cl.Tags[awsnet.TagCluster] != name {
		return cluster.Info{}, fmt.Errorf("%q (an EKS cluster nuv did not make): %w", name, cluster.ErrNotFound)
	}
	info := cluster.Info{Name: name, Provider: Name, APIURL: aws.ToString(cl.Endpoint), Version: aws.ToString(cl.Version), Flavor: "eks", HA: true, NodesReady: -1}
	if cl.CreatedAt != nil {
		info.Created = *cl.CreatedAt
	}
	switch cl.Status {
	case ekstypes.ClusterStatusActive, ekstypes.ClusterStatusUpdating:
		info.Status = cluster.Running
	case ekstypes.ClusterStatusCreating:
		info.Status = cluster.Creating
	default:
		info.Status = cluster.Degraded
	}
	if _, err := os.Stat(p.KubeconfigPath(name)); err == nil {
		info.Kubeconfig = p.KubeconfigPath(name)
		if cl.Status == ekstypes.ClusterStatusActive {
			info.NodesReady = kit.ReadyCount(ctx, p.KubeconfigPath(name))
		}
	}
	ngs, err := s.eks.ListNodegroups(ctx, &eks.ListNodegroupsInput{ClusterName: aws.String(name)})
	if err == nil {
		for _, ng := range ngs.Nodegroups {
			d, err := s.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(name), NodegroupName: aws.String(ng)})
			if err == nil && d.Nodegroup.ScalingConfig != nil {
				info.Nodes += int(aws.ToInt32(d.Nodegroup.ScalingConfig.DesiredSize))
			}
		}
	}
	info.Components = []cluster.Component{{Name: "control-plane (" + string(cl.Status) + ")", Running: cl.Status == ekstypes.ClusterStatusActive}}
	return info, nil
}

// Adopt describes, as a spec, an EKS cluster nuv made whose state record is gone (removed, or a
// store that was lost): anything tagged nuv.dev/cluster=NAME in the environment's account and
// region (the EKS cluster, IAM roles, EC2 resources). Delete then finds it all by the tag.
func (p *Provider) Adopt(ctx context.Context, name string) (*spec.Cluster, error) {
	return awsnet.Adopt(ctx, name, p.Name(), p.configured(), func(ctx context.Context, c *spec.Cluster) (string, error) {
		s, err := p.session(ctx, c, Section{})
		if err != nil {
			return "", err
		}
		return s.Config.Region, nil
	}, p.Observe)
}

// configured reports whether this environment names an AWS account to look in (awsnet.Configured).
func (p *Provider) configured() bool { return awsnet.Configured(p.getenv) }
