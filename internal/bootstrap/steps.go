package bootstrap

import (
	"context"
	"fmt"
)

// Step is one step of the bootstrap: the provider records it as a plan resource of its own (Key
// names it), and runs it, in order, until one fails; running it again after it succeeded
// changes nothing.
type Step struct {
	// Key is the step's resource name, e.g. "init", "join-control-plane/cp-2", "etcd-member/etcd-1".
	Key string
	// Machine is the machine the step works on.
	Machine string
	Run     func(ctx context.Context) error
}

// Steps are the bootstrap's steps in order: the load balancer, the external etcd members one at
// a time, init, the other control planes one at a time, the workers, the pod network, the
// kubeconfig.
func (b *Bootstrap) Steps() ([]Step, error) {
	c := &b.Cluster
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var steps []Step
	if c.LoadBalancer != nil {
		steps = append(steps, Step{"load-balancer", c.LoadBalancer.Name(), b.LoadBalancer})
	}
	for i, m := range c.Etcd {
		i := i
		steps = append(steps, Step{"etcd-member/" + m.Name(), m.Name(), func(ctx context.Context) error { return b.EtcdMember(ctx, i) }})
	}
	steps = append(steps, Step{"init", c.ControlPlanes[0].Name(), b.Init})
	for _, m := range c.ControlPlanes[1:] {
		m := m
		steps = append(steps, Step{"join-control-plane/" + m.Name(), m.Name(), func(ctx context.Context) error { return b.JoinControlPlane(ctx, m) }})
	}
	for _, m := range c.Workers {
		m := m
		steps = append(steps, Step{"join-worker/" + m.Name(), m.Name(), func(ctx context.Context) error { return b.JoinWorker(ctx, m) }})
	}
	steps = append(steps, Step{"pod-network", c.ControlPlanes[0].Name(), b.CNI})
	steps = append(steps, Step{"kubeconfig", c.ControlPlanes[0].Name(), func(ctx context.Context) error {
		_, err := b.ReadKubeconfig(ctx)
		return err
	}})
	return steps, nil
}

// Run runs every step in order and stops at the first that fails.
func (b *Bootstrap) Run(ctx context.Context) error {
	steps, err := b.Steps()
	if err != nil {
		return err
	}
	for _, s := range steps {
		if err := s.Run(ctx); err != nil {
			return fmt.Errorf("bootstrap step %s: %w", s.Key, err)
		}
	}
	return nil
}
