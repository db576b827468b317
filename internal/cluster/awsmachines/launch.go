package awsmachines

import (
	"context"
	"errors"
	"fmt"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"maps"
	"slices"
	"strings"

	"github.com/nuv-dev/nuv/internal/cluster"
)

// The machines of an apply boot at the same time, as kOps' and Terraform's launches do: an
// instance step launches its machine and is done once EC2 accepted it (pending, its id and private
// address recorded), and the first step that needs the machine to run waits for it with progress:
// a bootstrap step (kubeadm, HAProxy, etcd, the pod routes), the source/destination check, the
// target group's registration. A machine whose launch EC2 failed on its side is launched again
// there, by the waiting step, as the instance step would have. A machine an apply launched and a
// kill cut short is found again by the next apply (its record, or its tags), and waited for, not
// launched twice.

// launch is one machine an apply launched and no step has seen running yet.
type launch struct {
	res    cluster.Resource
	keepIP string
	count  int // launches made
	// save records the instance's resource (the save of the step that launched it).
	save func(cluster.Resource) error
}

// launchInstance is the instance step of a machine the plan creates: it launches the machine and
// leaves the wait for it to the first step that needs it.
func (x *exec) launchInstance(ctx context.Context) error {
	if err := x.startInstance(ctx); err != nil {
		return err
	}
	x.p.mu.Lock()
	defer x.p.mu.Unlock()
	if x.p.launches == nil {
		x.p.launches = map[string]*launch{}
	}
	x.p.launches[x.Name+"|"+x.Res.Key()] = &launch{res: *x.Res, keepIP: x.keepIP, count: 1, save: x.Save}
	return nil
}

// launched are the instance keys of cluster name's machines this apply launched and no step has
// seen running yet.
func (p *Provider) launched(name string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for k := range p.launches {
		if n, ik, _ := strings.Cut(k, "|"); n == name {
			out = append(out, ik)
		}
	}
	slices.Sort(out)
	return out
}

func (p *Provider) launchOf(name, instanceKey string) *launch {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.launches[name+"|"+instanceKey]
}

func (p *Provider) launchDone(name, instanceKey string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.launches, name+"|"+instanceKey)
}

// running waits until the machines of instance keys run, showing their state as it changes. A
// machine this apply launched whose launch EC2 failed on its side is launched again (up to
// launchAttempts launches); any other that does not start is an error naming it.
func (x *exec) running(ctx context.Context, instanceKeys ...string) error {
	for _, ik := range instanceKeys {
		if err := x.runningOne(ctx, ik); err != nil {
			return err
		}
	}
	return nil
}

func (x *exec) runningOne(ctx context.Context, ik string) error {
	for {
		id, err := x.ID(ik)
		if err != nil || id == "" {
			return fmt.Errorf("%s: its machine %s is not launched", x.Res.Key(), ik)
		}
		err = x.p.waitInstance(ctx, x.s, ik, id, true)
		l := x.p.launchOf(x.Name, ik)
		var failed *launchFailedError
		if err == nil || l == nil || !errors.As(err, &failed) || !failed.transient() || l.count >= launchAttempts || ctx.Err() != nil {
			if err == nil {
				x.p.launchDone(x.Name, ik)
			}
			return err
		}
		// The machine's own step made its launch: the next one is made as that step would.
		_, rname, _ := strings.Cut(ik, "/")
		res := l.res
		res.Fields = maps.Clone(res.Fields)
		y := &exec{Exec: &awsnet.Exec{S: x.S, C: x.C, Name: x.Name, RName: rname, Res: &res, Save: l.save, IDs: x.IDs, Log: x.Log}, p: x.p, s: x.s, m: x.m, keepIP: l.keepIP}
		if err := y.launchAgain(ctx, failed, l.count); err != nil {
			return err
		}
		x.p.mu.Lock()
		l.res, l.count = res, l.count+1
		x.p.mu.Unlock()
	}
}
