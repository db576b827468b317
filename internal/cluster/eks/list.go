package eks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// configured reports whether this environment names an AWS account to look in (credentials, a
// profile or an endpoint): without one, List and Status find nothing instead of probing the
// SDK's whole chain (instance metadata included) on every `nuv cluster list`.
func (p *Provider) configured() bool {
	for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		if p.getenv(k) != "" {
			return true
		}
	}
	return false
}

// listTimeout bounds List and Status: an unreachable endpoint (an emulator that is down) makes a
// row of `nuv cluster list` say so instead of holding the listing through every retry.
const listTimeout = 15 * time.Second

// List reports the EKS clusters nuv made (tagged nuv.dev/cluster) in the environment's account
// and region.
func (p *Provider) List(ctx context.Context) ([]cluster.Info, error) {
	if !p.configured() {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	s, err := p.session(ctx, &spec.Cluster{}, Section{})
	if err != nil {
		return nil, err
	}
	if p.selfManaged {
		return p.listMachines(ctx, s, "")
	}
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
	if p.selfManaged {
		return p.statusMachines(ctx, c)
	}
	name, sec := c.Metadata.Name, sectionOf(c)
	if !p.configured() && sec.Endpoint == "" && sec.Profile == "" {
		return cluster.Info{}, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
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
			info.NodesReady = p.readyNodes(ctx, name)
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

// readyNodes counts the Ready nodes through the cluster's kubeconfig (its exec credential
// included); -1 when the API does not answer within a few seconds.
func (p *Provider) readyNodes(ctx context.Context, name string) int {
	cfg, err := p.restConfig(name)
	if err != nil {
		return -1
	}
	cfg.Timeout = 5 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return -1
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return -1
	}
	n := 0
	for _, node := range nodes.Items {
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

// Adopt describes, as a spec, an EKS cluster nuv made whose state record is gone (removed, or a
// store that was lost): anything tagged nuv.dev/cluster=NAME in the environment's account and
// region (the EKS cluster, IAM roles, EC2 resources). Delete then finds it all by the tag.
func (p *Provider) Adopt(ctx context.Context, name string) (*spec.Cluster, error) {
	if !p.configured() {
		return nil, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: name}, Spec: spec.Spec{Provider: p.Name()}}
	// An AWS that cannot be asked is not a reason to stop another provider from adopting the name.
	s, err := p.session(ctx, c, Section{})
	if err != nil {
		return nil, fmt.Errorf("%q: %w (the eks provider could not look: %v)", name, cluster.ErrNotFound, err)
	}
	c.Spec.Region = s.Config.Region
	rs, err := p.Observe(ctx, c, nil)
	if err != nil {
		return nil, fmt.Errorf("%q: %w (the eks provider could not look: %v)", name, cluster.ErrNotFound, err)
	}
	for _, r := range rs {
		if !r.Foreign {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
}
