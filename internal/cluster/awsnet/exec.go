package awsnet

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// TagCluster marks every resource nuv makes for a cluster; TagResource names the resource (its
// key in the plan) on EC2 resources, whose names are only tags.
const (
	TagCluster  = kit.TagCluster
	TagResource = "nuv.dev/resource"
)

// IDs are the ids of the resources a provider observed or made, by cluster and resource key; its
// zero value is ready and it is safe for concurrent use.
type IDs struct {
	mu sync.Mutex
	m  map[string]map[string]string // cluster -> resource key -> id
}

// Remember records a resource's id for the changes that refer to it ("" forgets it).
func (ids *IDs) Remember(clusterName, key, id string) {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if ids.m == nil {
		ids.m = map[string]map[string]string{}
	}
	if ids.m[clusterName] == nil {
		ids.m[clusterName] = map[string]string{}
	}
	if id == "" {
		delete(ids.m[clusterName], key)
		return
	}
	ids.m[clusterName][key] = id
}

// Get returns the id of a resource observed or made (an error naming it otherwise: a plan always
// observes first, so a missing id is a dependency that does not exist).
func (ids *IDs) Get(clusterName, key string) (string, error) {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if id, ok := ids.m[clusterName][key]; ok {
		return id, nil
	}
	return "", fmt.Errorf("%s of cluster %s does not exist (it is made earlier in the plan)", key, clusterName)
}

// Exec is one change being carried out: the network kinds' handlers are its methods, and a
// provider's own change type embeds it for its kinds.
type Exec struct {
	// S is the session the change is made through.
	S *Session
	// C is the cluster's spec and Name its name.
	C    *spec.Cluster
	Name string
	// RName is the name in the change's key ("private-us-east-1a" of "subnet/private-us-east-1a").
	RName string
	// Res is the resource being made; its ID is set (and saved) the moment AWS returns it.
	Res *cluster.Resource
	// Save records a resource in the cluster's state.
	Save func(cluster.Resource) error
	// IDs are the ids of the cluster's resources, for the references between them.
	IDs *IDs
	// Log receives the waits' progress.
	Log cli.Logger
}

// Made records the new resource's id at once.
func (x *Exec) Made(id string) error {
	x.Res.ID = id
	x.IDs.Remember(x.Name, x.Res.Key(), id)
	return x.Save(*x.Res)
}

// ID is the id of the cluster's resource key.
func (x *Exec) ID(key string) (string, error) { return x.IDs.Get(x.Name, key) }

// Fail names the AWS operation and the resource of a failed call (nil when err is).
func (x *Exec) Fail(op, resource string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s on %s: %s", op, resource, APIMessage(err))
}

// Tags are the cluster's tags plus nuv's own (its name, expiry and owner).
func (x *Exec) Tags() map[string]string {
	return kit.ClusterTags(x.C)
}

// EC2Tags are the tags of the EC2 resource being made, of resource type rt: the cluster's,
// TagResource, its Name and the extra keys and values.
func (x *Exec) EC2Tags(rt ec2types.ResourceType, extra ...string) []ec2types.TagSpecification {
	t := x.Tags()
	t[TagResource] = x.Res.Key()
	t["Name"] = NameTag(x.Name, *x.Res)
	for i := 0; i+1 < len(extra); i += 2 {
		t[extra[i]] = extra[i+1]
	}
	var out []ec2types.Tag
	for _, k := range slices.Sorted(maps.Keys(t)) {
		out = append(out, ec2types.Tag{Key: aws.String(k), Value: aws.String(t[k])})
	}
	return []ec2types.TagSpecification{{ResourceType: rt, Tags: out}}
}

// NameTag is an EC2 resource's Name: the cluster's for its VPC, CLUSTER-KIND for the others named
// after the cluster, CLUSTER-NAME for the rest ("shop-private-us-east-1a").
func NameTag(clusterName string, r cluster.Resource) string {
	switch {
	case r.Kind == KindVPC:
		return clusterName
	case r.Name == clusterName:
		return clusterName + "-" + r.Kind
	}
	return clusterName + "-" + r.Name
}

// NotFound says whether a delete found nothing to delete (or succeeded).
func NotFound(err error) bool {
	c := APICode(err)
	return err == nil || strings.Contains(c, "NotFound") || c == "NoSuchEntity" || c == "ResourceNotFoundException"
}

// ActualID is the ID of the resource a change deletes ("" when none is known).
func ActualID(ch cluster.Change) string {
	if ch.Actual == nil {
		return ""
	}
	return ch.Actual.ID
}

// EC2Retry deletes an EC2 resource with f, retrying while dependencies just deleted let go (AWS's
// DependencyViolation); one already gone is done.
func (x *Exec) EC2Retry(ctx context.Context, ch cluster.Change, op string, f func() error) error {
	err := x.S.RetryWhile(ctx, 3*time.Minute, f, func(err error) bool {
		c := APICode(err)
		return c == "DependencyViolation" || c == "InvalidIPAddress.InUse" || c == "AuthFailure"
	})
	if NotFound(err) {
		return nil
	}
	return x.Fail(op, ch.Key+" ("+ActualID(ch)+")", err)
}

// Refuse is the error of a replace nuv does not make under a running cluster.
func (x *Exec) Refuse(ch cluster.Change) error {
	var fs []string
	for _, f := range ch.Fields {
		if f.ForcesReplace {
			fs = append(fs, fmt.Sprintf("%s: %s -> %s", f.Field, f.Old, f.New))
		}
	}
	return fmt.Errorf("%s cannot change in place (%s) and nuv does not replace it under a running cluster: delete the cluster (`nuv cluster delete %s`) and apply again, or keep the old value",
		ch.Key, strings.Join(fs, ", "), x.Name)
}

// Stranger is the error of deleting what carries nuv's tag but is no kind nuv makes.
func (x *Exec) Stranger(ch cluster.Change) error {
	typ := ""
	if ch.Actual != nil {
		typ = ch.Actual.Fields["type"]
	}
	return fmt.Errorf("EC2 %s %s is tagged %s=%s but is not a part nuv makes; nuv leaves it alone: delete it (or its tag) by hand", typ, ActualID(ch), TagCluster, x.Name)
}
