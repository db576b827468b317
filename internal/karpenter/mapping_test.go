package karpenter

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func ip(n int) *int { return &n }

// testCluster is the cluster of the golden files.
var testCluster = Cluster{Name: "dev", NodeRole: "dev-node", Tags: map[string]string{"team": "platform"}}

// goldenGroups are the groups of the golden files: one per shape of the mapping.
var goldenGroups = []struct {
	name string
	c    Cluster
	g    spec.NodeGroup
}{
	{"dynamic-on-demand", testCluster, spec.NodeGroup{
		Name: "web", Manager: "karpenter", InstanceType: "m5.large", Max: ip(10), Labels: map[string]string{"tier": "web"},
	}},
	{"spot-taints-disk", testCluster, spec.NodeGroup{
		Name: "batch", Manager: "karpenter", InstanceType: "m5.large, m6i.large", Spot: true, Min: ip(0), Max: ip(20),
		Taints: []string{"dedicated=batch:NoSchedule", "spot:NoExecute"}, DiskSize: 100,
	}},
	{"static-count", testCluster, spec.NodeGroup{
		Name: "system", Manager: "karpenter", Count: ip(3), Min: ip(2), Max: ip(5),
	}},
	{"bottlerocket-ids", Cluster{
		Name: "prod", NodeRole: "prod-node", AMIAlias: "bottlerocket@v1.40.0",
		SubnetIDs: []string{"subnet-0a", "subnet-0b"}, SecurityGroupTags: map[string]string{"nuv.dev/cluster": "prod", "tier": "nodes"},
	}, spec.NodeGroup{Name: "gpu", Manager: "karpenter", InstanceType: "g5.xlarge", Max: ip(2), DiskSize: 200}},
}

// marshalObjects writes objects as one multi-document YAML file.
func marshalObjects(t *testing.T, objs []*unstructured.Unstructured) []byte {
	t.Helper()
	var b bytes.Buffer
	for i, o := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(y)
	}
	return b.Bytes()
}

// golden compares got with testdata/name (rewritten with -update).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s", p, got)
	}
}

func TestObjectsGolden(t *testing.T) {
	for _, tc := range goldenGroups {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Objects(tc.c, tc.g)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != 2 || objs[0].GetKind() != KindNodeClass || objs[1].GetKind() != KindNodePool {
				t.Fatalf("want an EC2NodeClass then a NodePool, got %d objects", len(objs))
			}
			golden(t, filepath.Join("objects", tc.name+".yaml"), marshalObjects(t, objs))
		})
	}
}

func TestObjectsRefusesWhatTheMappingCannotExpress(t *testing.T) {
	base := spec.NodeGroup{Name: "w", Manager: "karpenter", Max: ip(3)}
	with := func(f func(g *spec.NodeGroup)) spec.NodeGroup {
		g := base
		f(&g)
		return g
	}
	for _, tc := range []struct {
		name string
		c    Cluster
		g    spec.NodeGroup
		want []string
	}{
		{"not karpenter", testCluster, with(func(g *spec.NodeGroup) { g.Manager = "managed" }), []string{`node group "w" has manager "managed", not karpenter`}},
		{"count but no max", testCluster, with(func(g *spec.NodeGroup) { g.Max, g.Count = nil, ip(2) }),
			[]string{`node group "w": max: required for a Karpenter group: it becomes the NodePool's limits.nodes`}},
		{"min without count", testCluster, with(func(g *spec.NodeGroup) { g.Min = ip(1) }),
			[]string{`min: a Karpenter NodePool (karpenter.sh/v1) has no minimum size: set count`}},
		{"bad instance type", testCluster, with(func(g *spec.NodeGroup) { g.InstanceType = "m5.large,M5_LARGE" }),
			[]string{`instanceType: "M5_LARGE" is not an EC2 instance type`}},
		{"instance type twice", testCluster, with(func(g *spec.NodeGroup) { g.InstanceType = "m5.large,m5.large" }),
			[]string{`instanceType: "m5.large" is listed twice`}},
		{"only commas", testCluster, with(func(g *spec.NodeGroup) { g.InstanceType = " , " }),
			[]string{`instanceType: " , " names no instance type`}},
		{"karpenter label", testCluster, with(func(g *spec.NodeGroup) { g.Labels = map[string]string{"karpenter.sh/capacity-type": "spot"} }),
			[]string{`labels.karpenter.sh/capacity-type: label domain "karpenter.sh" is Karpenter's`}},
		{"aws label", testCluster, with(func(g *spec.NodeGroup) { g.Labels = map[string]string{"karpenter.k8s.aws/instance-family": "m5"} }),
			[]string{`labels.karpenter.k8s.aws/instance-family: label domain "karpenter.k8s.aws" is Karpenter's`}},
		{"hostname label", testCluster, with(func(g *spec.NodeGroup) { g.Labels = map[string]string{"kubernetes.io/hostname": "a"} }),
			[]string{`labels.kubernetes.io/hostname: label kubernetes.io/hostname is restricted by Karpenter`}},
		{"nuv's label", testCluster, with(func(g *spec.NodeGroup) { g.Labels = map[string]string{LabelNodeGroup: "x"} }),
			[]string{`labels.nuv.dev/nodegroup: label nuv.dev/nodegroup is set by nuv`}},
		{"bad label value", testCluster, with(func(g *spec.NodeGroup) { g.Labels = map[string]string{"tier": "-web"} }),
			[]string{`labels.tier: invalid label value "-web"`}},
		{"disk too big", testCluster, with(func(g *spec.NodeGroup) { g.DiskSize = 20000 }),
			[]string{`diskSize: 20000: at most 16384 GiB`}},
		{"bad taint", testCluster, with(func(g *spec.NodeGroup) { g.Taints = []string{"x"} }),
			[]string{`taints[0]: taint "x": want key[=value]:Effect`}},
		{"several at once", testCluster, with(func(g *spec.NodeGroup) { g.Max, g.Min = nil, ip(1) }),
			[]string{"max: required", "; min: a Karpenter NodePool"}},
		{"no role", Cluster{Name: "dev"}, base, []string{`cluster "dev": the node role is required`}},
		{"role ARN", Cluster{Name: "dev", NodeRole: "arn:aws:iam::1:role/n"}, base, []string{`give the role's name, not its ARN`}},
		{"bad cluster name", Cluster{Name: "Dev", NodeRole: "r"}, base, []string{`cluster name: invalid name "Dev"`}},
		{"bad alias", Cluster{Name: "dev", NodeRole: "r", AMIAlias: "ubuntu@latest"}, base, []string{`AMI alias "ubuntu@latest": want family@version`}},
		{"long alias", Cluster{Name: "dev", NodeRole: "r", AMIAlias: "al2023@v20240807-" + strings.Repeat("1", 20)}, base, []string{`at most 30 characters`}},
		{"windows version", Cluster{Name: "dev", NodeRole: "r", AMIAlias: "windows2022@v1"}, base, []string{`windows families only take version latest`}},
		{"reserved tag", Cluster{Name: "dev", NodeRole: "r", Tags: map[string]string{"kubernetes.io/cluster/dev": "owned"}}, base,
			[]string{`tag "kubernetes.io/cluster/dev" is reserved by Karpenter`}},
		{"empty selector tag", Cluster{Name: "dev", NodeRole: "r", SubnetTags: map[string]string{"tier": ""}}, base,
			[]string{`subnet selector tag "tier"="": empty keys and values select nothing`}},
		{"empty id", Cluster{Name: "dev", NodeRole: "r", SecurityGroupIDs: []string{""}}, base, []string{`an empty security group ID`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Objects(tc.c, tc.g)
			if err == nil {
				t.Fatalf("accepted: %s", marshalObjects(t, objs))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

func TestValidateGivesSpecPaths(t *testing.T) {
	c := &spec.Cluster{Spec: spec.Spec{
		Tags: map[string]string{"karpenter.sh/nodepool": "x", "team": "a"},
		NodeGroups: []spec.NodeGroup{
			{Name: "managed", Count: ip(2)}, // not Karpenter's: not checked here
			{Name: "k", Manager: "karpenter", Count: ip(2), Labels: map[string]string{"karpenter.sh/x": "y"}},
			{Name: "ok", Manager: "karpenter", Max: ip(4)},
		},
	}}
	var got []string
	for _, e := range Validate(c) {
		got = append(got, e.Error())
	}
	want := []string{
		"spec.nodeGroups[1].max: required for a Karpenter group: it becomes the NodePool's limits.nodes (without it Karpenter could launch nodes without bound)",
		`spec.nodeGroups[1].labels.karpenter.sh/x: label domain "karpenter.sh" is Karpenter's (capacity type comes from spot, instance type from instanceType)`,
		`spec.tags.karpenter.sh/nodepool: tag "karpenter.sh/nodepool" is reserved by Karpenter on the instances it launches`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Validate:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Without a Karpenter group the spec's tags are not the mapping's business.
	c.Spec.NodeGroups = c.Spec.NodeGroups[:1]
	if errs := Validate(c); len(errs) != 0 {
		t.Errorf("no Karpenter group, yet %v", errs)
	}
}

func TestFieldsAndReplaces(t *testing.T) {
	dyn := spec.NodeGroup{Name: "w", Manager: "karpenter", InstanceType: "m5.large,m6i.large", Max: ip(5), Spot: true}
	objs, err := Objects(testCluster, dyn)
	if err != nil {
		t.Fatal(err)
	}
	f := Fields(objs)
	for k, want := range map[string]string{
		"nodepool.mode":                 "dynamic",
		"nodepool.replicas":             "",
		"nodepool.limits":               "nodes=5",
		"nodepool.requirements":         "key=kubernetes.io/os, operator=In, values=linux; key=node.kubernetes.io/instance-type, operator=In, values=[m5.large m6i.large]; key=karpenter.sh/capacity-type, operator=In, values=spot",
		"nodepool.labels":               "nuv.dev/nodegroup=w",
		"nodepool.taints":               "",
		"nodeclass.role":                "dev-node",
		"nodeclass.amiSelectorTerms":    "alias=al2023@latest",
		"nodeclass.subnetSelectorTerms": "tags={karpenter.sh/discovery=dev}",
		"nodeclass.tags":                "nuv.dev/cluster=dev, nuv.dev/nodegroup=w, team=platform",
		"nodeclass.blockDevices":        "",
	} {
		if f[k] != want {
			t.Errorf("Fields[%s] = %q, want %q", k, f[k], want)
		}
	}
	st := dyn
	st.Count = ip(2)
	sobjs, err := Objects(testCluster, st)
	if err != nil {
		t.Fatal(err)
	}
	sf := Fields(sobjs)
	if sf["nodepool.mode"] != "static" || sf["nodepool.replicas"] != "2" {
		t.Errorf("static: mode %q replicas %q", sf["nodepool.mode"], sf["nodepool.replicas"])
	}
	if r, why := Replaces(dyn, st); !r || !strings.Contains(why, "static") {
		t.Errorf("Replaces(dynamic, static) = %v %q", r, why)
	}
	bigger := st
	bigger.Count = ip(3)
	if r, _ := Replaces(st, bigger); r {
		t.Error("a new count replaces the pool")
	}
	// No objects: every field empty, so a plan shows each as set from nothing.
	for k, v := range Fields(nil) {
		if v != "" {
			t.Errorf("Fields(nil)[%s] = %q", k, v)
		}
	}
}

func TestCRDsAreKarpentersV1WithCEL(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range crds {
		names = append(names, c.Name)
		if len(c.Spec.Versions) == 0 || c.Spec.Versions[0].Name != "v1" || !c.Spec.Versions[0].Served {
			t.Errorf("%s: versions %+v", c.Name, c.Spec.Versions)
		}
	}
	if got := strings.Join(names, " "); got != "nodepools.karpenter.sh nodeclaims.karpenter.sh ec2nodeclasses.karpenter.k8s.aws" {
		t.Errorf("CRDs = %s", got)
	}
	subnets := crds[2].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["subnetSelectorTerms"]
	found := false
	for _, r := range subnets.XValidations {
		found = found || r.Message == "subnetSelectorTerms cannot be empty"
	}
	if !found {
		t.Errorf("EC2NodeClass subnetSelectorTerms has no CEL rule refusing an empty list: %+v", subnets.XValidations)
	}
	// Copies: changing one does not change the next caller's.
	crds[0].Name = "changed"
	again, _ := CRDs()
	if again[0].Name != "nodepools.karpenter.sh" {
		t.Error("CRDs returns shared objects")
	}
}

// TestModuleVersionMatchesGoMod keeps ModuleVersion (said in errors and docs) in step with go.mod.
func TestModuleVersionMatchesGoMod(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "github.com/aws/karpenter-provider-aws " + ModuleVersion; !strings.Contains(string(data), want) {
		t.Errorf("go.mod does not require %s", want)
	}
}
