package karpenter_test

import (
	"fmt"
	"maps"
	"slices"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/karpenter"
)

// A provider maps each `manager: karpenter` group to its objects and compares their Fields with
// what Observe reads back; Install, then Apply, puts them on the cluster.
func Example() {
	max := 20
	g := spec.NodeGroup{Name: "batch", Manager: "karpenter", InstanceType: "m5.large", Spot: true, Max: &max, DiskSize: 50}
	objs, err := karpenter.Objects(karpenter.Cluster{Name: "dev", NodeRole: "dev-node"}, g)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range objs {
		fmt.Println(o.GetAPIVersion(), o.GetKind(), o.GetName())
	}
	f := karpenter.Fields(objs)
	for _, k := range slices.Sorted(maps.Keys(f)) {
		v := f[k]
		if v == "" {
			v = "(not set)"
		}
		fmt.Printf("%s: %s\n", k, v)
	}
	// Output:
	// karpenter.k8s.aws/v1 EC2NodeClass batch
	// karpenter.sh/v1 NodePool batch
	// nodeclass.amiSelectorTerms: alias=al2023@latest
	// nodeclass.blockDevices: deviceName=/dev/xvda, ebs={deleteOnTermination=true, encrypted=true, volumeSize=50Gi, volumeType=gp3}, rootVolume=true
	// nodeclass.role: dev-node
	// nodeclass.securityGroupTerms: tags={karpenter.sh/discovery=dev}
	// nodeclass.subnetSelectorTerms: tags={karpenter.sh/discovery=dev}
	// nodeclass.tags: nuv.dev/cluster=dev, nuv.dev/nodegroup=batch
	// nodepool.labels: nuv.dev/nodegroup=batch
	// nodepool.limits: nodes=20
	// nodepool.mode: dynamic
	// nodepool.nodeClassRef: group=karpenter.k8s.aws, kind=EC2NodeClass, name=batch
	// nodepool.replicas: (not set)
	// nodepool.requirements: key=kubernetes.io/os, operator=In, values=linux; key=node.kubernetes.io/instance-type, operator=In, values=m5.large; key=karpenter.sh/capacity-type, operator=In, values=spot
	// nodepool.taints: (not set)
}
