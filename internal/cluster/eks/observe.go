package eks

import (
	"context"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

func sectionOf(c *spec.Cluster) Section {
	if c.Spec.Provider == MachinesName {
		return MachinesKey.Get(c).withDefaults().network()
	}
	s, _ := DecodeSection(c.SectionMap("eks"))
	return s
}

// observation collects what exists, with the EC2 ids mapped to resource keys so references
// (a NAT gateway's subnet, a route's target) read as keys like the desired resources' fields.
type observation struct {
	name     string
	recorded map[string]string // id -> key, from the state record
	out      []cluster.Resource
	keys     map[string]string // EC2 id -> resource key
	seen     map[string]bool   // EC2 ids observed
	// rules: security groups are read as a self-managed cluster's, every ingress rule listed.
	rules bool
}

func (o *observation) add(r cluster.Resource) {
	o.out = append(o.out, r)
	if r.ID != "" {
		o.keys[r.ID] = r.Key()
		o.seen[r.ID] = true
	}
}

func (o *observation) ref(id string) string {
	if k, ok := o.keys[id]; ok {
		return k
	}
	return id
}

func (o *observation) keysOf(kind string) []string {
	var out []string
	for _, r := range o.out {
		if r.Kind == kind {
			out = append(out, r.Key())
		}
	}
	return out
}

func tagsOf(tags []ec2types.Tag) map[string]string {
	m := map[string]string{}
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

// resourceKey is an EC2 resource's key: its nuv.dev/resource tag, else the key the state record
// gives its id (a resource whose tags were edited by hand), else kind/id.
func (o *observation) resourceKey(tags map[string]string, kind, id string) (string, string) {
	if k, ok := tags[TagResource]; ok {
		if kd, n, ok := strings.Cut(k, "/"); ok && kd == kind {
			return kd, n
		}
	}
	if k, ok := o.recorded[id]; ok {
		if kd, n, ok := strings.Cut(k, "/"); ok && kd == kind {
			return kd, n
		}
	}
	return kind, id
}

// Observe finds what exists of the cluster: EC2 resources by the nuv.dev/cluster tag and by the
// IDs recorded, IAM roles and the EKS cluster by name (Foreign when not tagged as this cluster's),
// the node groups and add-ons of the cluster, the kubeconfig, and anything else EC2 lists with the
// cluster's tag.
func (p *Provider) Observe(ctx context.Context, c *spec.Cluster, recorded []cluster.Resource) ([]cluster.Resource, error) {
	if p.selfManaged {
		return p.observeMachines(ctx, c, recorded)
	}
	sec := sectionOf(c)
	s, err := p.session(ctx, c, sec)
	if err != nil {
		return nil, err
	}
	name := c.Metadata.Name
	o := &observation{name: name, keys: map[string]string{}, seen: map[string]bool{}, recorded: map[string]string{}}
	rec := map[string][]string{}
	for _, r := range recorded {
		if r.ID != "" {
			rec[r.Kind] = append(rec[r.Kind], r.ID)
			o.recorded[r.ID] = r.Key()
		}
	}
	if err := s.observeNetwork(ctx, o, rec); err != nil {
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
			o.add(cluster.Resource{Kind: kindKubeconfig, Name: name, ID: p.KubeconfigPath(name),
				Fields: map[string]string{"path": "clusters/" + name + ".kubeconfig"}, DependsOn: []string{key(kindCluster, name)}})
		}
	}
	if err := s.sweep(ctx, o); err != nil {
		return nil, err
	}
	for _, r := range o.out {
		if !r.Foreign {
			p.remember(name, r.Key(), r.ID)
		}
	}
	return o.out, nil
}

func tagFilter(name string) []ec2types.Filter {
	return []ec2types.Filter{{Name: aws.String("tag:" + TagCluster), Values: []string{name}}}
}

// describe calls f once with the cluster's tag filter and once per recorded id not found by it
// (an id that no longer exists is skipped).
func describe[T any](ctx context.Context, o *observation, ids []string, f func(ctx context.Context, filters []ec2types.Filter, ids []string) ([]T, error), id func(T) string) ([]T, error) {
	all, err := f(ctx, tagFilter(o.name), nil)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, x := range all {
		have[id(x)] = true
	}
	for _, rid := range ids {
		if have[rid] {
			continue
		}
		more, err := f(ctx, nil, []string{rid})
		if err != nil {
			if strings.Contains(apiCode(err), "NotFound") {
				continue
			}
			return nil, err
		}
		all = append(all, more...)
	}
	return all, nil
}

var effects = map[ekstypes.TaintEffect]string{ekstypes.TaintEffectNoSchedule: "NoSchedule", ekstypes.TaintEffectNoExecute: "NoExecute", ekstypes.TaintEffectPreferNoSchedule: "PreferNoSchedule"}
