package eks

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// kinds are the resource kinds of an EKS cluster, each with its create/update, delete and
// Terraform form (observation is by service: network.go, role.go, controlplane.go, nodegroup.go,
// karpenter.go).
var kinds = kit.Kinds[*exec, *tfWriter]{
	Provider: Name,
	ByKind: map[string]kit.Kind[*exec, *tfWriter]{
		kindVPC:        {Apply: (*exec).vpc, Delete: (*exec).deleteVPC, Terraform: (*tfWriter).vpc},
		kindSubnet:     {Apply: (*exec).subnet, Delete: (*exec).deleteSubnet, Terraform: (*tfWriter).subnet},
		kindIGW:        {Apply: (*exec).igw, Delete: (*exec).deleteIGW, Terraform: (*tfWriter).igw},
		kindEIP:        {Apply: (*exec).eip, Delete: (*exec).deleteEIP, Terraform: (*tfWriter).eip},
		kindNAT:        {Apply: (*exec).nat, Delete: (*exec).deleteNAT, Terraform: (*tfWriter).nat},
		kindRouteTable: {Apply: (*exec).routeTable, Delete: (*exec).deleteRouteTable, Terraform: (*tfWriter).routeTable},
		kindSG:         {Apply: (*exec).securityGroup, Delete: (*exec).deleteSecurityGroup, Terraform: (*tfWriter).securityGroup},
		kindRole:       {Apply: (*exec).role, Delete: (*exec).deleteRole, Terraform: (*tfWriter).role},
		kindCluster:    {Apply: (*exec).cluster, Delete: (*exec).deleteCluster, Terraform: (*tfWriter).cluster},
		// nuv writes the kubeconfig (`nuv cluster apply`); Terraform users get the endpoint and CA
		// as outputs and `aws eks update-kubeconfig` or nuv's exec credential.
		kindKubeconfig: {Apply: (*exec).kubeconfig, Delete: (*exec).deleteKubeconfig},
		kindNodeGroup:  {Apply: (*exec).nodegroup, Delete: (*exec).deleteNodegroup, Replace: true, Terraform: (*tfWriter).nodegroup},
		kindAddon:      {Apply: (*exec).addon, Delete: (*exec).deleteAddon, Terraform: (*tfWriter).addon},
		kindKarpenter:  {Apply: (*exec).karpenter, Delete: (*exec).deleteKarpenter, Replace: true, Terraform: (*tfWriter).karpenter},
	},
	Refuse:   (*exec).refuse,
	Stranger: (*exec).stranger,
}

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
	x := &exec{p: p, s: s, c: c, sec: sec, name: c.Metadata.Name, rname: rname, save: save}
	ks := kinds
	if p.selfManaged {
		ks = machineKinds.Get()
	}
	if ch.Action == cluster.Delete {
		err := ks.Execute(ctx, x, ch)
		if err == nil {
			p.remember(x.name, ch.Key, "")
		}
		return nil, err
	}
	if ks.Refuses(ch) {
		return nil, x.refuse(ch)
	}
	if p.selfManaged {
		m, errs := p.resolveMachines(ctx, c)
		if len(errs) > 0 {
			return nil, fmt.Errorf("%s: %v", ch.Key, errs[0])
		}
		x.m = m
	} else {
		r, errs := p.resolve(ctx, c)
		if len(errs) > 0 {
			return nil, fmt.Errorf("%s: %v", ch.Key, errs[0])
		}
		x.r = r
	}
	res := *ch.Desired
	if ch.Actual != nil {
		res.ID = ch.Actual.ID
	}
	x.res = &res
	if err := ks.Execute(ctx, x, ch); err != nil {
		return nil, err
	}
	p.remember(x.name, ch.Key, res.ID)
	return &res, nil
}

// refuse is the error of a replace nuv does not make under a running cluster.
func (x *exec) refuse(ch cluster.Change) error {
	var fs []string
	for _, f := range ch.Fields {
		if f.ForcesReplace {
			fs = append(fs, fmt.Sprintf("%s: %s -> %s", f.Field, f.Old, f.New))
		}
	}
	return fmt.Errorf("%s cannot change in place (%s) and nuv does not replace it under a running cluster: delete the cluster (`nuv cluster delete %s`) and apply again, or keep the old value",
		ch.Key, strings.Join(fs, ", "), x.name)
}

// exec is one change being carried out.
type exec struct {
	p    *Provider
	s    *session
	c    *spec.Cluster
	sec  Section
	r    *resolved
	m    *machinesResolved // a self-managed cluster's
	name string
	// rname is the name in the change's key ("private-us-east-1a" of "subnet/private-us-east-1a").
	rname string
	res   *cluster.Resource
	save  func(cluster.Resource) error
	// keepIP is the private address a rolled machine's replacement is launched at (its own).
	keepIP string
}

// made records the new resource's id at once.
func (x *exec) made(id string) error {
	x.res.ID = id
	x.p.remember(x.name, x.res.Key(), id)
	return x.save(*x.res)
}

func (x *exec) id(key string) (string, error) { return x.p.id(x.name, key) }

// fail names the AWS operation and the resource of a failed call.
func (x *exec) fail(op, resource string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s on %s: %s", op, resource, apiMessage(err))
}

// tags are the cluster's tags plus nuv's own (its name, expiry and owner).
func (x *exec) tags() map[string]string {
	return kit.ClusterTags(x.c)
}

func (x *exec) ec2Tags(rt ec2types.ResourceType, extra ...string) []ec2types.TagSpecification {
	t := x.tags()
	t[TagResource] = x.res.Key()
	t["Name"] = nameTag(x.name, *x.res)
	for i := 0; i+1 < len(extra); i += 2 {
		t[extra[i]] = extra[i+1]
	}
	var out []ec2types.Tag
	for _, k := range slices.Sorted(maps.Keys(t)) {
		out = append(out, ec2types.Tag{Key: aws.String(k), Value: aws.String(t[k])})
	}
	return []ec2types.TagSpecification{{ResourceType: rt, Tags: out}}
}

// nameTag is an EC2 resource's Name: the cluster's for its VPC, CLUSTER-KIND for the others named
// after the cluster, CLUSTER-NAME for the rest ("shop-private-us-east-1a").
func nameTag(clusterName string, r cluster.Resource) string {
	switch {
	case r.Kind == kindVPC:
		return clusterName
	case r.Name == clusterName:
		return clusterName + "-" + r.Kind
	}
	return clusterName + "-" + r.Name
}

// notFound says whether a delete found nothing to delete (or succeeded).
func notFound(err error) bool {
	c := apiCode(err)
	return err == nil || strings.Contains(c, "NotFound") || c == "NoSuchEntity" || c == "ResourceNotFoundException"
}

// actualID is the ID of the resource a change deletes ("" when none is known).
func actualID(ch cluster.Change) string {
	if ch.Actual == nil {
		return ""
	}
	return ch.Actual.ID
}

// ec2Retry deletes an EC2 resource with f, retrying while dependencies just deleted let go (AWS's
// DependencyViolation); one already gone is done.
func (x *exec) ec2Retry(ctx context.Context, ch cluster.Change, op string, f func() error) error {
	err := x.p.retryWhile(ctx, x.s, 3*time.Minute, f, func(err error) bool {
		c := apiCode(err)
		return c == "DependencyViolation" || c == "InvalidIPAddress.InUse" || c == "AuthFailure"
	})
	if notFound(err) {
		return nil
	}
	return x.fail(op, ch.Key+" ("+actualID(ch)+")", err)
}

// stranger is the error of deleting what carries nuv's tag but is no kind nuv makes.
func (x *exec) stranger(ch cluster.Change) error {
	typ := ""
	if ch.Actual != nil {
		typ = ch.Actual.Fields["type"]
	}
	return fmt.Errorf("EC2 %s %s is tagged %s=%s but is not a part nuv makes; nuv leaves it alone: delete it (or its tag) by hand", typ, actualID(ch), TagCluster, x.name)
}
