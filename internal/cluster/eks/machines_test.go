package eks

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen/tfgentest"
)

// haNLB is a self-managed cluster of three control planes with stacked etcd behind a Network
// Load Balancer and two workers, over two zones.
const haNLB = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: ha}
spec:
  provider: aws
  kubernetesVersion: "1.36"
  zones: [us-east-1a, us-east-1b]
  controlPlane: {count: 3}
  nodeGroups:
  - {name: workers, count: 2, instanceType: m6i.large}
  aws:
    controlPlane: {instanceType: m6i.xlarge}
    ssh: {cidrs: [203.0.113.0/24]}
`

// externalHAProxy is ksctl's shape: one control plane, three etcd machines and an HAProxy
// machine in front, one worker, one zone, no NAT gateway.
const externalHAProxy = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: tier}
spec:
  provider: aws
  zones: [us-east-1a]
  networking: {vpcCIDR: 10.42.0.0/16}
  nodeGroups:
  - {name: pool, count: 1}
  aws:
    nat: none
    etcd: {placement: external, count: 3}
    loadBalancer: {type: haproxy}
`

// TestMachinesPlanGolden plans new self-managed clusters: the network, a security group per role
// with kubeadm's ports, the key pair, the load balancer, every machine and the bootstrap steps in
// kubeadm's order (external etcd members one at a time, init, control planes joined in turn,
// the pod network, the workers, the kubeconfig).
func TestMachinesPlanGolden(t *testing.T) {
	for _, tc := range []struct{ name, doc string }{{"plan-machines-ha-nlb.txt", haNLB}, {"plan-machines-external-haproxy.txt", externalHAProxy}} {
		t.Run(tc.name, func(t *testing.T) {
			c, desired := machinesPlan(t, tc.doc)
			plan, err := cluster.Diff(c.Metadata.Name, MachinesName, desired, nil)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			engine.WritePlan(&b, plan)
			golden(t, tc.name, b.Bytes())
		})
	}
}

// machinesPlan is the resolved desired resources of a self-managed spec, as the plan golden has
// them.
func machinesPlan(t *testing.T, doc string) (*spec.Cluster, []cluster.Resource) {
	t.Helper()
	c := parse(t, doc)
	if errs := checkMachines(c); len(errs) > 0 {
		t.Fatalf("checkMachines: %v", errs)
	}
	sec := MachinesKey.Get(c).withDefaults()
	subnets, errs := CarveSubnets(c.Spec.Networking.VPCCIDR, c.Spec.Zones, sec.PublicSubnetCIDRs, sec.PrivateSubnetCIDRs)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r := &machinesResolved{sec: sec, version: "1.36.3", image: "nuv-machine-1.36.3", zones: c.Spec.Zones, subnets: subnets}
	return c, machinesDesired(c, r)
}

// TestMachinesTerraformGolden writes both self-managed specs as Terraform modules: golden files,
// HCL that parses and terraform fmt -check clean.
func TestMachinesTerraformGolden(t *testing.T) {
	for name, doc := range map[string]string{"machines-ha-nlb": haNLB, "machines-external-haproxy": externalHAProxy} {
		t.Run(name, func(t *testing.T) {
			c, desired := machinesPlan(t, doc)
			files, err := (&Provider{}).machinesTerraform(c, desired)
			if err != nil {
				t.Fatal(err)
			}
			tfgentest.Check(t, filepath.Join("testdata", "terraform", name), files)
		})
	}
}

// TestCheckMachines refuses what a self-managed cluster cannot be, naming the field.
func TestCheckMachines(t *testing.T) {
	for _, tc := range []struct {
		name, edit, want string
	}{
		{"even control planes", "controlPlane: {count: 3}=>controlPlane: {count: 2}", "spec.controlPlane.count: 2 control planes: want 1, 3 or 5"},
		{"k3s", "ssh: {cidrs: [203.0.113.0/24]}=>bootstrap: k3s", "spec.aws.bootstrap: k3s cannot be installed by nuv"},
		{"etcd count", "ssh: {cidrs: [203.0.113.0/24]}=>etcd: {placement: external, count: 4}", "spec.aws.etcd.count: 4 etcd members: want 3 or 5"},
		{"stacked count", "ssh: {cidrs: [203.0.113.0/24]}=>etcd: {count: 3}", "spec.aws.etcd.count: stacked etcd runs one member on each control plane"},
		{"placement", "ssh: {cidrs: [203.0.113.0/24]}=>etcd: {placement: sideways}", `spec.aws.etcd.placement: "sideways": want stacked or external`},
		{"lb type", "ssh: {cidrs: [203.0.113.0/24]}=>loadBalancer: {type: alb}", `spec.aws.loadBalancer.type: "alb": want nlb or haproxy`},
		{"nlb machine", "ssh: {cidrs: [203.0.113.0/24]}=>loadBalancer: {instanceType: t3.small}", "spec.aws.loadBalancer.instanceType: a Network Load Balancer is not a machine"},
		{"ssh cidr", "203.0.113.0/24=>203.0.113.0/33", `spec.aws.ssh.cidrs[0]: invalid CIDR "203.0.113.0/33"`},
		{"unknown field", "ssh: {cidrs: [203.0.113.0/24]}=>etcdd: {}", "spec.aws.etcdd"},
		{"role name", "name: workers=>name: etcd", `spec.nodeGroups[0].name: "etcd" names a machine role`},
		{"spot", "instanceType: m6i.large}=>instanceType: m6i.large, spot: true}", "spec.nodeGroups[0].spot: spot machines are not offered"},
		{"karpenter", "instanceType: m6i.large}=>instanceType: m6i.large, manager: karpenter}", `spec.nodeGroups[0].manager: "karpenter"`},
		{"patch", `kubernetesVersion: "1.36"=>kubernetesVersion: "1.36.3"`, "spec.kubernetesVersion: \"1.36.3\": the machine image fixes the patch release"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, repl, _ := strings.Cut(tc.edit, "=>")
			doc := strings.Replace(haNLB, old, repl, 1)
			if doc == haNLB {
				t.Fatalf("edit %q changed nothing", tc.edit)
			}
			var got []string
			for _, e := range checkMachines(parse(t, doc)) {
				got = append(got, e.Error())
			}
			if all := strings.Join(got, "\n"); !strings.Contains(all, tc.want) {
				t.Errorf("problems:\n%s\nwant one containing %q", all, tc.want)
			}
		})
	}
	if errs := checkMachines(parse(t, haNLB)); len(errs) > 0 {
		t.Errorf("the valid spec was refused: %v", errs)
	}
}
