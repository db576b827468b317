package eks

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

func sectionOf(c *spec.Cluster) Section {
	s, _ := DecodeSection(c.SectionMap("eks"))
	return s
}

// Observe finds what exists of the cluster: EC2 resources by the nuv.dev/cluster tag and by the
// IDs recorded, IAM roles and the EKS cluster by name (Foreign when not tagged as this cluster's),
// the node groups and add-ons of the cluster, the kubeconfig, and anything else EC2 lists with the
// cluster's tag.
func (p *Provider) Observe(ctx context.Context, c *spec.Cluster, recorded []cluster.Resource) ([]cluster.Resource, error) {
	sec := sectionOf(c)
	s, err := p.session(ctx, c, sec)
	if err != nil {
		return nil, err
	}
	name := c.Metadata.Name
	o, rec := awsnet.NewObservation(name, recorded)
	if err := s.ObserveNetwork(ctx, o, rec); err != nil {
		return nil, err
	}
	for _, rn := range []string{clusterRoleName(name), nodeRoleName(name)} {
		if err := s.observeRole(ctx, o, rn); err != nil {
			return nil, err
		}
	}
	cl, foreign, err := s.observeCluster(ctx, o, c, sec)
	if err != nil {
		return nil, err
	}
	if foreign {
		cl = nil
	}
	if cl != nil && cl.Status != ekstypes.ClusterStatusDeleting {
		if err := s.observeGroups(ctx, o, name); err != nil {
			return nil, err
		}
		if err := p.observeKarpenter(ctx, o, c, aws.ToString(cl.Endpoint), recorded); err != nil {
			return nil, err
		}
	}
	server := ""
	if cl != nil {
		server = aws.ToString(cl.Endpoint)
	}
	if _, err := os.Stat(p.KubeconfigPath(name)); err == nil && (server == "" || p.kubeconfigMatches(name, server)) {
		if server != "" || p.kubeconfigOf(name) {
			o.Add(cluster.Resource{Kind: kindKubeconfig, Name: name, ID: p.KubeconfigPath(name),
				Fields: map[string]string{"path": "clusters/" + name + ".kubeconfig"}, DependsOn: []string{awsnet.Key(kindCluster, name)}})
		}
	}
	if err := s.Sweep(ctx, o); err != nil {
		return nil, err
	}
	o.Remember(&p.ids)
	return o.Out, nil
}

var effects = map[ekstypes.TaintEffect]string{ekstypes.TaintEffectNoSchedule: "NoSchedule", ekstypes.TaintEffectNoExecute: "NoExecute", ekstypes.TaintEffectPreferNoSchedule: "PreferNoSchedule"}
