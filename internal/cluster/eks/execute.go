package eks

import (
	"context"
	"fmt"
	"github.com/nuv-dev/nuv/internal/lazy"
	"strings"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// kinds are the resource kinds of an EKS cluster, each with its create/update, delete and
// Terraform form: the network's (package awsnet) and EKS's (observation is by service: role.go,
// controlplane.go, nodegroup.go, karpenter.go).
// (Built on first use: nothing at init.)
var kinds = lazy.Value[kit.Kinds[*exec, *tfWriter]]{New: func() kit.Kinds[*exec, *tfWriter] {
	byKind := awsnet.NetworkKinds[*exec, *tfWriter]()
	for k, h := range map[string]kit.Kind[*exec, *tfWriter]{
		kindRole:    {Apply: (*exec).role, Delete: (*exec).deleteRole, Terraform: (*tfWriter).role},
		kindCluster: {Apply: (*exec).cluster, Delete: (*exec).deleteCluster, Terraform: (*tfWriter).cluster},
		// nuv writes the kubeconfig (`nuv cluster apply`); Terraform users get the endpoint and CA
		// as outputs and `aws eks update-kubeconfig` or nuv's exec credential.
		kindKubeconfig: {Apply: (*exec).kubeconfig, Delete: (*exec).deleteKubeconfig},
		kindNodeGroup:  {Apply: (*exec).nodegroup, Delete: (*exec).deleteNodegroup, Replace: true, Terraform: (*tfWriter).nodegroup},
		kindAddon:      {Apply: (*exec).addon, Delete: (*exec).deleteAddon, Terraform: (*tfWriter).addon},
		kindKarpenter:  {Apply: (*exec).karpenter, Delete: (*exec).deleteKarpenter, Replace: true, Terraform: (*tfWriter).karpenter},
	} {
		byKind[k] = h
	}
	return kit.Kinds[*exec, *tfWriter]{Provider: Name, ByKind: byKind, Refuse: (*exec).Refuse, Stranger: (*exec).Stranger}
}}

// Execute carries out one change with the handler of its kind. A resource is saved (save) the
// moment AWS returns its id, before any wait, so an interrupted apply finds it and never makes it
// twice.
func (p *Provider) Execute(ctx context.Context, c *spec.Cluster, ch cluster.Change, save func(cluster.Resource) error) (*cluster.Resource, error) {
	sec := sectionOf(c)
	s, err := p.session(ctx, c, sec)
	if err != nil {
		return nil, err
	}
	_, rname, _ := strings.Cut(ch.Key, "/")
	x := &exec{Exec: &awsnet.Exec{S: s.Session, C: c, Name: c.Metadata.Name, RName: rname, Save: save, IDs: &p.ids, Log: p.log()}, p: p, s: s, sec: sec}
	return awsnet.Execute(ctx, kinds.Get(), x, ch, func() error {
		r, errs := p.resolve(ctx, c)
		if len(errs) > 0 {
			return fmt.Errorf("%s: %v", ch.Key, errs[0])
		}
		x.r = r
		return nil
	})
}

// exec is one change being carried out: the network's (awsnet.Exec) or EKS's.
type exec struct {
	*awsnet.Exec
	p   *Provider
	s   *session
	sec Section
	r   *resolved
}
