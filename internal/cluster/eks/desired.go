package eks

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// The provider's resources, in dependency order (each kind's Name is in the plan):
//
//	vpc/NAME                       the network (not made when spec.eks.vpcId names one)
//	subnet/private-ZONE            nodes' subnets, one per zone
//	subnet/public-ZONE             NAT gateways' and load balancers' subnets
//	internet-gateway/NAME          the VPC's way out
//	elastic-ip/nat-ZONE            the NAT gateway's public address
//	nat-gateway/ZONE               one (nat: single) or one per zone (nat: perAZ)
//	route-table/public             0.0.0.0/0 to the internet gateway, associated with the public subnets
//	route-table/private[-ZONE]     0.0.0.0/0 to a NAT gateway (none with nat: none)
//	security-group/NAME            the cluster's additional security group
//	iam-role/nuv-NAME-cluster      the cluster's role with its managed policies
//	iam-role/nuv-NAME-nodes        the nodes' role with theirs
//	eks-cluster/NAME               the control plane
//	kubeconfig/NAME                clusters/NAME.kubeconfig with the `nuv -eks-token` credential
//	node-group/GROUP               a managed node group
//	karpenter/GROUP                a Karpenter NodePool and EC2NodeClass (manager: karpenter)
//	addon/ADDON                    an EKS add-on (vpc-cni, coredns, kube-proxy, ...)
const (
	kindRole       = "iam-role"
	kindCluster    = "eks-cluster"
	kindKubeconfig = "kubeconfig"
	kindNodeGroup  = "node-group"
	kindKarpenter  = "karpenter"
	kindAddon      = "addon"
)

// Managed policies of the roles nuv makes.
var (
	clusterPolicies = []string{"AmazonEKSClusterPolicy"}
	nodePolicies    = []string{"AmazonEC2ContainerRegistryReadOnly", "AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy"}
)

func clusterRoleName(c string) string { return "nuv-" + c + "-cluster" }
func nodeRoleName(c string) string    { return "nuv-" + c + "-nodes" }

// Desired lists the resources the spec asks for (Validate has resolved it against AWS).
func (p *Provider) Desired(c *spec.Cluster) ([]cluster.Resource, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, errs := p.resolve(ctx, c)
	if len(errs) > 0 {
		var all []error
		for _, e := range errs {
			all = append(all, e)
		}
		return nil, errors.Join(all...)
	}
	return desired(c, r)
}

// desired is Desired once the spec is resolved (a pure function: the plan golden tests it).
func desired(c *spec.Cluster, r *resolved) ([]cluster.Resource, error) {
	name := c.Metadata.Name
	sec := r.sec
	var out []cluster.Resource
	add := func(res cluster.Resource) { out = append(out, res) }
	var clusterDeps, privateKeys, nodeDeps []string
	if sec.VPCID == "" {
		n := awsnet.NetworkDesired(c, r.subnets, r.zones, sec.NAT)
		out = append(out, n.Resources...)
		add(cluster.Resource{Kind: awsnet.KindSG, Name: name, Fields: map[string]string{"vpc": n.VPC, "ingress": "self"}, Replace: []string{"vpc"}, DependsOn: []string{n.VPC}})
		privateKeys, nodeDeps = n.Private, n.Routes
		clusterDeps = append(clusterDeps, awsnet.Key(awsnet.KindSG, name))
		clusterDeps = append(clusterDeps, n.Private...)
		clusterDeps = append(clusterDeps, n.Public...)
	}
	cr, nr := clusterRoleName(name), nodeRoleName(name)
	add(cluster.Resource{Kind: kindRole, Name: cr, Fields: map[string]string{"service": "eks.amazonaws.com", "policies": strings.Join(clusterPolicies, ",")}, Replace: []string{"service"}})
	add(cluster.Resource{Kind: kindRole, Name: nr, Fields: map[string]string{"service": "ec2.amazonaws.com", "policies": strings.Join(nodePolicies, ",")}, Replace: []string{"service"}})
	clusterDeps = append(clusterDeps, awsnet.Key(kindRole, cr))
	cf := map[string]string{
		"version":         r.version,
		"endpointPublic":  kit.Bool(sec.EndpointPublic),
		"endpointPrivate": kit.Bool(sec.EndpointPrivate),
		"publicCIDRs":     strings.Join(orList(sec.PublicAccessCIDRs, "0.0.0.0/0"), ","),
		"logging":         strings.Join(sec.Logging, ","),
		"serviceCIDR":     c.Spec.Networking.ServiceCIDR,
		"tags":            kit.Map(c.Spec.Tags),
	}
	if sec.VPCID != "" {
		cf["subnets"] = strings.Join(sec.SubnetIDs, ",")
	}
	ck := awsnet.Key(kindCluster, name)
	add(cluster.Resource{Kind: kindCluster, Name: name, Fields: cf, Replace: []string{"serviceCIDR", "subnets"}, DependsOn: clusterDeps})
	add(cluster.Resource{Kind: kindKubeconfig, Name: name, Fields: map[string]string{"path": "clusters/" + name + ".kubeconfig"}, DependsOn: []string{ck}})
	groupDeps := append([]string{ck, awsnet.Key(kindRole, nr)}, privateKeys...)
	groupDeps = append(groupDeps, nodeDeps...)
	for _, g := range c.Spec.NodeGroups {
		if g.Manager == "karpenter" {
			kr, err := karpenterDesired(c, sec, g)
			if err != nil {
				return nil, err
			}
			add(kr)
			continue
		}
		add(cluster.Resource{Kind: kindNodeGroup, Name: g.Name, Fields: groupFields(g, r.version, sec.AMIType),
			Replace: []string{"instanceTypes", "capacity", "diskSize", "amiType"}, DependsOn: slices.Clone(groupDeps)})
	}
	for _, n := range slices.Sorted(maps.Keys(r.addons)) {
		add(cluster.Resource{Kind: kindAddon, Name: n, Fields: map[string]string{"version": r.addons[n]}, DependsOn: []string{ck}})
	}
	return out, nil
}

func orList(v []string, d ...string) []string {
	if len(v) == 0 {
		return d
	}
	return v
}

// scaling returns a group's EKS scaling: min, max and desired size.
func scaling(g spec.NodeGroup) (minSize, maxSize, desiredSize int) {
	desiredSize = g.Size()
	minSize = desiredSize
	if g.Min != nil {
		minSize = *g.Min
	}
	maxSize = max(desiredSize, minSize, 1)
	if g.Max != nil {
		maxSize = *g.Max
	}
	return minSize, maxSize, desiredSize
}

func capacityOf(g spec.NodeGroup) string {
	if g.Spot {
		return "SPOT"
	}
	return "ON_DEMAND"
}

func groupFields(g spec.NodeGroup, version, ami string) map[string]string {
	lo, hi, want := scaling(g)
	disk := g.DiskSize
	if disk == 0 {
		disk = 20
	}
	var labels []string
	for _, k := range slices.Sorted(maps.Keys(g.Labels)) {
		labels = append(labels, k+"="+g.Labels[k])
	}
	taints := slices.Clone(g.Taints)
	slices.Sort(taints)
	return map[string]string{
		"instanceTypes": awsnet.InstanceTypeOf(g),
		"capacity":      capacityOf(g),
		"min":           strconv.Itoa(lo),
		"max":           strconv.Itoa(hi),
		"desired":       strconv.Itoa(want),
		"labels":        strings.Join(labels, ","),
		"taints":        strings.Join(taints, ","),
		"diskSize":      strconv.Itoa(disk),
		"version":       version,
		"amiType":       ami,
	}
}
