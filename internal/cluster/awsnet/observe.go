package awsnet

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nuv-dev/nuv/internal/cluster"
)

// Observation collects what exists, with the EC2 ids mapped to resource keys so references
// (a NAT gateway's subnet, a route's target) read as keys like the desired resources' fields.
type Observation struct {
	// Name is the cluster's name.
	Name string
	// Recorded maps the ids of the state record to their keys.
	Recorded map[string]string
	// Out is what was found.
	Out []cluster.Resource
	// Keys maps EC2 ids to resource keys.
	Keys map[string]string
	// Seen are the EC2 ids observed.
	Seen map[string]bool
	// Rules, when set, reads every security group's ingress rules (a self-managed cluster's
	// groups): it writes them as the plan does.
	Rules func(o *Observation, perms []ec2types.IpPermission) string
}

// NewObservation starts the observation of cluster name from its state record, and returns the
// recorded ids by kind too.
func NewObservation(name string, recorded []cluster.Resource) (*Observation, map[string][]string) {
	o := &Observation{Name: name, Keys: map[string]string{}, Seen: map[string]bool{}, Recorded: map[string]string{}}
	rec := map[string][]string{}
	for _, r := range recorded {
		if r.ID != "" {
			rec[r.Kind] = append(rec[r.Kind], r.ID)
			o.Recorded[r.ID] = r.Key()
		}
	}
	return o, rec
}

// Add adds a resource found.
func (o *Observation) Add(r cluster.Resource) {
	o.Out = append(o.Out, r)
	if r.ID != "" {
		o.Keys[r.ID] = r.Key()
		o.Seen[r.ID] = true
	}
}

// Ref is the key of the resource of id, else id itself.
func (o *Observation) Ref(id string) string {
	if k, ok := o.Keys[id]; ok {
		return k
	}
	return id
}

// KeysOf are the keys of the resources of kind found so far.
func (o *Observation) KeysOf(kind string) []string {
	var out []string
	for _, r := range o.Out {
		if r.Kind == kind {
			out = append(out, r.Key())
		}
	}
	return out
}

// Remember records the ids of everything found that is the cluster's in ids.
func (o *Observation) Remember(ids *IDs) {
	for _, r := range o.Out {
		if !r.Foreign {
			ids.Remember(o.Name, r.Key(), r.ID)
		}
	}
}

// TagsOf is EC2 tags as a map.
func TagsOf(tags []ec2types.Tag) map[string]string {
	m := map[string]string{}
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

// ResourceKey is an EC2 resource's key: its nuv.dev/resource tag, else the key the state record
// gives its id (a resource whose tags were edited by hand), else kind/id.
func (o *Observation) ResourceKey(tags map[string]string, kind, id string) (string, string) {
	if k, ok := tags[TagResource]; ok {
		if kd, n, ok := strings.Cut(k, "/"); ok && kd == kind {
			return kd, n
		}
	}
	if k, ok := o.Recorded[id]; ok {
		if kd, n, ok := strings.Cut(k, "/"); ok && kd == kind {
			return kd, n
		}
	}
	return kind, id
}

// TagFilter selects the EC2 resources tagged as cluster name's.
func TagFilter(name string) []ec2types.Filter {
	return []ec2types.Filter{{Name: aws.String("tag:" + TagCluster), Values: []string{name}}}
}

// Describe calls f once with the cluster's tag filter and once per recorded id not found by it
// (an id that no longer exists is skipped).
func Describe[T any](ctx context.Context, o *Observation, ids []string, f func(ctx context.Context, filters []ec2types.Filter, ids []string) ([]T, error), id func(T) string) ([]T, error) {
	all, err := f(ctx, TagFilter(o.Name), nil)
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
			if strings.Contains(APICode(err), "NotFound") {
				continue
			}
			return nil, err
		}
		all = append(all, more...)
	}
	return all, nil
}
