package awsmachines

import (
	"bytes"
	"flag"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet/awstest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen/tfgentest"
)

var update = flag.Bool("update", false, "rewrite the golden plan files")

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
			plan, err := cluster.Diff(c.Metadata.Name, Name, desired, nil)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			engine.WritePlan(&b, plan)
			awstest.Golden(t, *update, tc.name, b.Bytes())
		})
	}
}

// machinesPlan is the resolved desired resources of a self-managed spec, as the plan golden has
// them.
func machinesPlan(t *testing.T, doc string) (*spec.Cluster, []cluster.Resource) {
	t.Helper()
	c := awstest.Parse(t, doc)
	if errs := checkMachines(c); len(errs) > 0 {
		t.Fatalf("checkMachines: %v", errs)
	}
	sec := Key.Get(c).withDefaults()
	subnets, errs := awsnet.CarveSubnets(c.Spec.Networking.VPCCIDR, c.Spec.Zones, sec.PublicSubnetCIDRs, sec.PrivateSubnetCIDRs)
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
			for _, e := range checkMachines(awstest.Parse(t, doc)) {
				got = append(got, e.Error())
			}
			if all := strings.Join(got, "\n"); !strings.Contains(all, tc.want) {
				t.Errorf("problems:\n%s\nwant one containing %q", all, tc.want)
			}
		})
	}
	if errs := checkMachines(awstest.Parse(t, haNLB)); len(errs) > 0 {
		t.Errorf("the valid spec was refused: %v", errs)
	}
}

// TestMachinesRollPlanGolden plans day-two changes of running self-managed clusters: a new
// instance type of the control planes and of a node group is a rolling replacement, one machine
// at a time in the plan's order (control planes first), each change saying what it does and what
// the API cannot keep (a lone control plane, the HAProxy machine); external etcd members roll
// the same way. A group scaled down drains the machine that goes (its join's delete) before its
// instance is terminated; one scaled up joins the new machine. A machine that does not run is
// replaced without a roll (its join is in the plan).
func TestMachinesRollPlanGolden(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		edits     []string
		broken    string
	}{
		{name: "plan-machines-roll-ha-nlb.txt", doc: haNLB, edits: []string{
			"controlPlane: {instanceType: m6i.xlarge}=>controlPlane: {instanceType: m6i.2xlarge}",
			"count: 2, instanceType: m6i.large=>count: 2, instanceType: m6i.xlarge"}},
		{name: "plan-machines-roll-external-haproxy.txt", doc: externalHAProxy, edits: []string{
			"etcd: {placement: external, count: 3}=>etcd: {placement: external, count: 3, instanceType: m6i.xlarge}",
			"loadBalancer: {type: haproxy}=>loadBalancer: {type: haproxy, instanceType: t3.medium}",
			"nat: none=>nat: none\n    controlPlane: {instanceType: m6i.xlarge}"}},
		{name: "plan-machines-scale-down.txt", doc: haNLB, edits: []string{"count: 2, instanceType=>count: 1, instanceType"}},
		{name: "plan-machines-scale-up.txt", doc: haNLB, edits: []string{"count: 2, instanceType=>count: 3, instanceType"}},
		{name: "plan-machines-roll-broken.txt", doc: haNLB, broken: "instance/workers-1", edits: []string{
			"count: 2, instanceType: m6i.large=>count: 2, instanceType: m6i.xlarge"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, before := machinesPlan(t, tc.doc)
			actual := runningAs(before)
			doc := tc.doc
			for _, e := range tc.edits {
				old, repl, _ := strings.Cut(e, "=>")
				if !strings.Contains(doc, old) {
					t.Fatalf("edit %q: the spec has no %q", e, old)
				}
				doc = strings.Replace(doc, old, repl, 1)
			}
			if tc.broken != "" {
				// Observe keeps no bootstrap step of a machine that does not run.
				var kept []cluster.Resource
				for _, r := range actual {
					if r.Key() == tc.broken {
						r.Broken = "it is stopped, not running: it is replaced"
					}
					if r.Fields["instance"] != tc.broken {
						kept = append(kept, r)
					}
				}
				actual = kept
			}
			c, desired := machinesPlan(t, doc)
			plan, err := cluster.Diff(c.Metadata.Name, Name, desired, actual)
			if err != nil {
				t.Fatal(err)
			}
			p := &Provider{}
			if err := p.Preflight(t.Context(), c, plan); err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			engine.WritePlan(&b, plan)
			awstest.Golden(t, *update, tc.name, b.Bytes())
		})
	}
}

// runningAs is what Observe finds of a cluster made from desired: every resource with an id (the
// bootstrap's steps recorded with their machine's).
func runningAs(desired []cluster.Resource) []cluster.Resource {
	ids := map[string]string{}
	var out []cluster.Resource
	for _, r := range desired {
		r.ID = "id-" + strings.ReplaceAll(r.Key(), "/", "-")
		if r.Kind == kindInstance {
			r.ID = "i-" + r.Name
		}
		ids[r.Key()] = r.ID
		r.Replace = nil
		out = append(out, r)
	}
	for i, r := range out {
		if in := r.Fields["instance"]; in != "" {
			out[i].ID = ids[in]
		}
	}
	return out
}
