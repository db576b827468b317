package kind

import (
	"context"
	"fmt"
	"strconv"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
)

// LoadBalancerImage is the image of the load balancer kind v0.33 puts in front of several
// control planes (its pkg/cluster/internal/loadbalancer.Image, which kind does not export; a test
// reads kind's source to keep the two equal). kind pulls it when a cluster has more than one
// control plane; nuv checks that the runtime has it before anything is made.
const LoadBalancerImage = "docker.io/envoyproxy/envoy:v1.36.2"

var _ cluster.Preflighter = (*Provider)(nil)

// Preflight refuses a plan that creates or replaces a kind cluster with more than one control
// plane while the container runtime lacks kind's load balancer image: kind would fail half-way
// through creating (the image cannot be pulled on an air-gapped machine), so nothing is made.
func (p *Provider) Preflight(ctx context.Context, c *spec.Cluster, plan *cluster.Plan) error {
	if c.Spec.ControlPlane.Count <= 1 {
		return nil // no load balancer (and a plan needs no runtime)
	}
	for _, ch := range plan.Changes {
		if ch.Key != kindCluster+"/"+c.Metadata.Name || (ch.Action != cluster.Create && ch.Action != cluster.Replace) {
			continue
		}
		rt, err := p.runtime(ctx)
		if err != nil {
			return err
		}
		return p.checkLoadBalancerImage(ctx, rt, c)
	}
	return nil
}

// checkLoadBalancerImage fails, saying why the image is needed and how to provide it, when the
// spec asks for several control planes and the runtime lacks the load balancer image.
func (p *Provider) checkLoadBalancerImage(ctx context.Context, rt containerrt.Runtime, c *spec.Cluster) error {
	cps := c.Spec.ControlPlane.Count
	if cps <= 1 {
		return nil
	}
	image := p.loadBalancerImage()
	if _, err := rt.Output(ctx, "image", "inspect", "--format", "{{.Id}}", image); err == nil {
		return nil
	}
	return fmt.Errorf("spec.controlPlane.count is %s: kind puts a load balancer in front of several control planes, a container of image %s, which %s on this machine does not have; nothing was created. "+
		"Where a registry is reachable: `%s pull %s`. On an air-gapped machine: on one that can pull it, `%s pull %s && %s save -o envoy.tar %s`, copy envoy.tar here and `%s load -i envoy.tar`. "+
		"Or ask for one control plane (controlPlane.count: 1)",
		strconv.Itoa(cps), image, rt.Name, rt.Name, image, rt.Name, image, rt.Name, image, rt.Name)
}

func (p *Provider) loadBalancerImage() string {
	if p.lbImage != "" {
		return p.lbImage
	}
	return LoadBalancerImage
}
