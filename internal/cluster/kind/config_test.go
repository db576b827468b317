package kind

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

var update = flag.Bool("update", false, "rewrite golden files")

func readSpec(t *testing.T, file string) *spec.Cluster {
	t.Helper()
	cs, err := spec.ReadFile(filepath.Join("testdata", "specs", file))
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 {
		t.Fatalf("%s: want one document, got %d", file, len(cs))
	}
	if errs := (&Provider{}).Validate(cs[0]); len(errs) > 0 {
		t.Fatalf("%s: %v", file, errs)
	}
	return cs[0]
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// TestConfigGolden turns specs into kind configurations: nodes, labels, taints, image, networks,
// ports and the host's patches.
func TestConfigGolden(t *testing.T) {
	for _, tc := range []struct {
		spec, golden string
		host         Host
		image        string
	}{
		{spec: "one-node.yaml", golden: "one-node.kind.yaml", image: "nuv.local/kind-node:v1.36.3"},
		{spec: "two-node.yaml", golden: "two-node-cgroupv1.kind.yaml", image: "nuv.local/kind-node:v1.36.3", host: Host{CgroupV1: true, NoSysResource: true}},
		{spec: "ha-groups.yaml", golden: "ha-groups.kind.yaml", image: "nuv.local/kind-node:v1.36.3", host: Host{CgroupV1: true}},
		{spec: "image.yaml", golden: "image.kind.yaml", image: "registry.example.com/nuv/node:v1.36.3", host: Host{NoSysResource: true}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			c := readSpec(t, tc.spec)
			cfg, err := Config(ConfigInput{Spec: c, Image: tc.image, Host: tc.host})
			if err != nil {
				t.Fatal(err)
			}
			b, err := Render(cfg)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.golden, b)
		})
	}
}

// TestPlanNewGolden is the plan of a new kind cluster as `nuv cluster plan` prints it.
func TestPlanNewGolden(t *testing.T) {
	c := readSpec(t, "ha-groups.yaml")
	desired, err := (&Provider{}).Desired(c)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := cluster.Diff(c.Metadata.Name, "kind", desired, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	engine.WritePlan(&b, plan)
	golden(t, "plan-new.golden", b.Bytes())
}

func node(name, group string, cp bool, labels map[string]string, taints ...corev1.Taint) corev1.Node {
	l := map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", LabelCluster: "two", LabelProvider: "kind", LabelNodeGroup: group}
	for k, v := range labels {
		l[k] = v
	}
	if cp {
		l["node-role.kubernetes.io/control-plane"] = ""
		taints = append(taints, corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule})
	}
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Spec:   corev1.NodeSpec{ProviderID: "kind://docker/two/" + name, Taints: taints},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.36.3"}}}
}

// TestObservedVersusSpec: the fields observed from a cluster's nodes match the spec that made
// it (no changes), and a node-count, label or role change is a replacement the plan names.
func TestObservedVersusSpec(t *testing.T) {
	c := readSpec(t, "two-node.yaml")
	nodes := []corev1.Node{
		node("two-control-plane", ControlPlaneGroup, true, nil),
		node("two-worker", "workers", false, nil, corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule}),
	}
	actual := func(c *spec.Cluster) []cluster.Resource {
		f := observedNodeFields(nodes, desiredVersion(c))
		for _, k := range recordedFields {
			f[k] = desiredFields(readSpec(t, "two-node.yaml"))[k]
		}
		f["running"] = "true"
		return []cluster.Resource{{Kind: kindCluster, Name: c.Metadata.Name, ID: "kind://docker/two", Fields: f}}
	}
	plan := func(c *spec.Cluster) *cluster.Plan {
		d, _ := (&Provider{}).Desired(c)
		p, err := cluster.Diff(c.Metadata.Name, "kind", d, actual(c))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := plan(c); !p.Empty() {
		t.Fatalf("the cluster the spec made plans changes: %+v", p.Changes)
	}
	for _, tc := range []struct {
		name, want string
		edit       func(c *spec.Cluster)
	}{
		{"count", "workers: workers=1 -> workers=2", func(c *spec.Cluster) { n := 2; c.Spec.NodeGroups[0].Count = &n }},
		{"role", "controlPlanes: 1 -> 3", func(c *spec.Cluster) { c.Spec.ControlPlane.Count = 3 }},
		{"labels", "labels: (none) -> workers: tier=app", func(c *spec.Cluster) { c.Spec.NodeGroups[0].Labels = map[string]string{"tier": "app"} }},
		{"version", "version: 1.36.3 -> 1.35", func(c *spec.Cluster) { c.Spec.KubernetesVersion = "1.35" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := readSpec(t, "two-node.yaml")
			tc.edit(c)
			p := plan(c)
			if len(p.Changes) != 1 || p.Changes[0].Action != cluster.Replace {
				t.Fatalf("want one replacement, got %+v", p.Changes)
			}
			var b bytes.Buffer
			engine.WritePlan(&b, p)
			if !strings.Contains(b.String(), "-/+ replace kind-cluster/two") || !strings.Contains(b.String(), tc.want+"  (forces replacement)") {
				t.Errorf("plan does not say %q:\n%s", tc.want, b.String())
			}
		})
	}
}

// TestValidate lists what a kind spec cannot ask for, each with its field path.
func TestValidate(t *testing.T) {
	one := 1
	for _, tc := range []struct {
		name string
		edit func(s *spec.Spec)
		path string
		msg  string
	}{
		{"instance type", func(s *spec.Spec) {
			s.NodeGroups = []spec.NodeGroup{{Name: "w", Count: &one, InstanceType: "m5.large"}}
		}, "spec.nodeGroups[0].instanceType", "no instance type"},
		{"spot", func(s *spec.Spec) { s.NodeGroups = []spec.NodeGroup{{Name: "w", Count: &one, Spot: true}} }, "spec.nodeGroups[0].spot", "never spot"},
		{"karpenter", func(s *spec.Spec) { s.NodeGroups = []spec.NodeGroup{{Name: "w", Count: &one, Manager: "karpenter"}} }, "spec.nodeGroups[0].manager", "Karpenter"},
		{"min max only", func(s *spec.Spec) { s.NodeGroups = []spec.NodeGroup{{Name: "w", Min: &one, Max: &one}} }, "spec.nodeGroups[0].count", "no autoscaler"},
		{"group named control-plane", func(s *spec.Spec) { s.NodeGroups = []spec.NodeGroup{{Name: "control-plane", Count: &one}} }, "spec.nodeGroups[0].name", "control-plane nodes"},
		{"region", func(s *spec.Spec) { s.Region = "eu-west-1" }, "spec.region", "no region"},
		{"local section", func(s *spec.Spec) { s.Sections = spec.Sections{"local": []byte(`{"flavor":"eks"}`)} }, "spec.local", "provider local"},
		{"proxy mode", func(s *spec.Spec) { setKind(s, &Section{KubeProxyMode: "userspace"}) }, "spec.kind.kubeProxyMode", "want nftables"},
		{"port", func(s *spec.Spec) { setKind(s, &Section{Ports: []PortMapping{{ContainerPort: 70000}}}) }, "spec.kind.ports[0].containerPort", "between 1 and 65535"},
		{"protocol", func(s *spec.Spec) {
			setKind(s, &Section{Ports: []PortMapping{{ContainerPort: 80, Protocol: "http"}}})
		}, "spec.kind.ports[0].protocol", "TCP, UDP or SCTP"},
		{"too many nodes", func(s *spec.Spec) { n := 30; s.NodeGroups = []spec.NodeGroup{{Name: "w", Count: &n}} }, "spec.nodeGroups", "at most 20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "k"}, Spec: spec.Spec{Provider: "kind"}}
			tc.edit(&c.Spec)
			errs := (&Provider{}).Validate(c)
			if len(errs) != 1 || errs[0].Path != tc.path || !strings.Contains(errs[0].Msg, tc.msg) {
				t.Errorf("want one error at %s containing %q, got %v", tc.path, tc.msg, errs)
			}
		})
	}
}

// setKind sets the kind section of a spec under test.
func setKind(s *spec.Spec, sec *Section) {
	c := &spec.Cluster{Spec: *s}
	Key.Set(c, sec)
	*s = c.Spec
}
