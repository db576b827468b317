package awsnet

import (
	"context"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
)

// Changer is a provider's change type: one that embeds *Exec.
type Changer interface{ NetExec() *Exec }

// Writer is a provider's Terraform writer: one that embeds *TF.
type Writer interface{ NetTF() *TF }

// NetExec is the network's part of a provider's change.
func (x *Exec) NetExec() *Exec { return x }

// NetTF is the network's part of a provider's Terraform writer.
func (w *TF) NetTF() *TF { return w }

// netKind is a network kind's handlers, as methods of Exec and TF.
type netKind struct {
	apply, del func(*Exec, context.Context, cluster.Change) error
	tf         func(*TF, cluster.Resource) error
}

// NetworkKinds are the network's kinds (VPC, subnets, internet gateway, elastic addresses, NAT
// gateways, route tables and the cluster's security group) for a provider's kit.Kinds, whose
// change type X embeds *Exec and writer W *TF; the provider adds its own kinds (or its own
// security group) to the map.
func NetworkKinds[X Changer, W Writer]() map[string]kit.Kind[X, W] {
	out := map[string]kit.Kind[X, W]{}
	for kind, k := range map[string]netKind{
		KindVPC:        {(*Exec).VPC, (*Exec).DeleteVPC, (*TF).VPC},
		KindSubnet:     {(*Exec).Subnet, (*Exec).DeleteSubnet, (*TF).Subnet},
		KindIGW:        {(*Exec).IGW, (*Exec).DeleteIGW, (*TF).IGW},
		KindEIP:        {(*Exec).EIP, (*Exec).DeleteEIP, (*TF).EIP},
		KindNAT:        {(*Exec).NAT, (*Exec).DeleteNAT, (*TF).NAT},
		KindRouteTable: {(*Exec).RouteTable, (*Exec).DeleteRouteTable, (*TF).RouteTable},
		KindSG:         {(*Exec).SecurityGroup, (*Exec).DeleteSecurityGroup, (*TF).SecurityGroup},
	} {
		out[kind] = kit.Kind[X, W]{
			Apply:     func(x X, ctx context.Context, ch cluster.Change) error { return k.apply(x.NetExec(), ctx, ch) },
			Delete:    func(x X, ctx context.Context, ch cluster.Change) error { return k.del(x.NetExec(), ctx, ch) },
			Terraform: func(w W, r cluster.Resource) error { return k.tf(w.NetTF(), r) },
		}
	}
	return out
}

// Execute carries out change ch with the handler of its kind in ks, x being the change's
// executor: a delete at once; a replace ks refuses is refused; anything else once resolve (the
// provider's reading of the spec against AWS, which sets what x needs) succeeded, on a copy of
// the desired resource with the actual's ID. The resource's id is remembered in x's IDs (a
// deleted one forgotten) and the resource made is returned.
func Execute[X Changer, W any](ctx context.Context, ks kit.Kinds[X, W], x X, ch cluster.Change, resolve func() error) (*cluster.Resource, error) {
	e := x.NetExec()
	if ch.Action == cluster.Delete {
		err := ks.Execute(ctx, x, ch)
		if err == nil {
			e.IDs.Remember(e.Name, ch.Key, "")
		}
		return nil, err
	}
	if ks.Refuses(ch) {
		return nil, e.Refuse(ch)
	}
	if err := resolve(); err != nil {
		return nil, err
	}
	res := *ch.Desired
	if ch.Actual != nil {
		res.ID = ch.Actual.ID
	}
	e.Res = &res
	if err := ks.Execute(ctx, x, ch); err != nil {
		return nil, err
	}
	e.IDs.Remember(e.Name, ch.Key, res.ID)
	return &res, nil
}
