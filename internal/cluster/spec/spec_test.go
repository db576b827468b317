package spec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const good = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata:
  name: dev
spec:
  provider: local
  kubernetesVersion: "1.36"
  controlPlane:
    count: 3
  nodeGroups:
  - name: workers
    count: 2
    labels:
      tier: web
    taints: ["dedicated=web:NoSchedule"]
  networking:
    podCIDR: 10.244.0.0/16
    serviceCIDR: 10.96.0.0/16
  local:
    flavor: eks
---
apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata:
  name: second
spec:
  provider: local
`

func TestDecodeGood(t *testing.T) {
	cs, err := Decode("specs.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 {
		t.Fatalf("got %d clusters", len(cs))
	}
	c := cs[0]
	if c.Metadata.Name != "dev" || c.Spec.ControlPlane.Count != 3 || c.Spec.NodeGroups[0].Size() != 2 ||
		c.Spec.NodeGroups[0].Labels["tier"] != "web" || string(c.Section("local")) != `{"flavor":"eks"}` {
		t.Fatalf("decoded %+v", c.Spec)
	}
	if c.Source != "specs.yaml:1" || cs[1].Source != "specs.yaml:22" {
		t.Fatalf("sources %q %q", c.Source, cs[1].Source)
	}
	if l := c.Line("spec.nodeGroups[0].count"); l != 12 {
		t.Fatalf("line of spec.nodeGroups[0].count = %d, want 12", l)
	}
}

func TestDecodeBad(t *testing.T) {
	head := "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: dev\nspec:\n  provider: local\n"
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"unknown top field", head + "  nodes: 3\n", []string{"f.yaml:7: spec.nodes: unknown field (valid: provider, region"}},
		{"unknown nested field", head + "  nodeGroups:\n  - name: a\n    cnt: 2\n", []string{"f.yaml:9: spec.nodeGroups[0].cnt: unknown field"}},
		{"wrong type int", head + "  controlPlane:\n    count: three\n", []string{`f.yaml:8: spec.controlPlane.count: want an integer, got "three"`}},
		{"wrong type bool", head + "  registry: yes please\n", []string{`f.yaml:7: spec.registry: want true or false`}},
		{"list expected", head + "  zones: us-east-1a\n", []string{"f.yaml:7: spec.zones: want a list"}},
		{"mapping expected", head + "  networking: 10.0.0.0/8\n", []string{"f.yaml:7: spec.networking: want a mapping"}},
		{"bad version", head + "  kubernetesVersion: latest\n", []string{`f.yaml:7: spec.kubernetesVersion: "latest" is not a version`}},
		{"bad cidr", head + "  networking:\n    podCIDR: 10.0.0.0/33\n", []string{`f.yaml:8: spec.networking.podCIDR: invalid CIDR "10.0.0.0/33"`}},
		{"host bits", head + "  networking:\n    podCIDR: 10.0.0.1/8\n", []string{`has host bits set (did you mean 10.0.0.0/8?)`}},
		{"overlap", head + "  networking:\n    podCIDR: 10.0.0.0/8\n    serviceCIDR: 10.96.0.0/12\n", []string{"f.yaml:9: spec.networking.serviceCIDR: 10.96.0.0/12 overlaps the pod network 10.0.0.0/8"}},
		{"min above max", head + "  nodeGroups:\n  - name: a\n    min: 3\n    max: 1\n", []string{"f.yaml:9: spec.nodeGroups[0].min: min 3 is above max 1"}},
		{"count outside", head + "  nodeGroups:\n  - name: a\n    count: 5\n    max: 2\n", []string{"spec.nodeGroups[0].count: count 5 is above max 2"}},
		{"bad taint", head + "  nodeGroups:\n  - name: a\n    taints: [\"x=y:Sometimes\"]\n", []string{`f.yaml:9: spec.nodeGroups[0].taints[0]: taint "x=y:Sometimes": effect "Sometimes"`}},
		{"duplicate group", head + "  nodeGroups:\n  - name: a\n  - name: a\n", []string{`f.yaml:9: spec.nodeGroups[1].name: node group "a" is listed twice`}},
		{"bad manager", head + "  nodeGroups:\n  - name: a\n    manager: cluster-autoscaler\n", []string{`spec.nodeGroups[0].manager: "cluster-autoscaler": want managed or karpenter`}},
		{"bad name", strings.Replace(head, "name: dev", "name: Dev_1", 1), []string{`f.yaml:4: metadata.name: invalid name "Dev_1"`}},
		{"no provider", strings.Replace(head, "  provider: local\n", "  region: x\n", 1), []string{"spec.provider: required"}},
		{"wrong kind", strings.Replace(head, "kind: Cluster", "kind: Clusters", 1), []string{`f.yaml:2: kind: want Cluster, got "Clusters"`}},
		{"two errors", head + "  nodes: 3\n  controlPlane:\n    count: x\n", []string{"f.yaml:7: spec.nodes", "f.yaml:9: spec.controlPlane.count"}},
		{"duplicate field", head + "  provider: kind\n", []string{"f.yaml:7: spec.provider: given twice"}},
		{"syntax", "apiVersion: [\n", []string{"f.yaml:1: did not find expected node content (at the end of the file)"}},
		{"syntax at the line of the fault", head + "  nodeGroups:\n  - name: a\n    count: 1\n   zones: [a]\n", []string{"f.yaml:10: did not find expected key"}},
		{"empty", "# nothing\n", []string{"f.yaml: no cluster spec in the file"}},
		{"same name twice", head + "---\n" + head, []string{`f.yaml:8: cluster "dev" is specified twice (also at f.yaml:1)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode("f.yaml", []byte(tt.doc))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestParseTaint(t *testing.T) {
	for in, want := range map[string]Taint{
		"a=b:NoSchedule":     {"a", "b", "NoSchedule"},
		"a:NoExecute":        {"a", "", "NoExecute"},
		"k.io/x=:NoSchedule": {"k.io/x", "", "NoSchedule"},
	} {
		got, err := ParseTaint(in)
		if err != nil || got != want {
			t.Errorf("ParseTaint(%q) = %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"a=b", "=b:NoSchedule", "a:Never"} {
		if _, err := ParseTaint(bad); err == nil {
			t.Errorf("ParseTaint(%q): no error", bad)
		}
	}
}

// TestSections: a spec keeps only its provider's section; the zero decoder keeps it as written,
// refuses another provider's and lists the provider's section among the valid fields; the JSON
// form writes sections as keys of spec and reads them back as they were.
func TestSections(t *testing.T) {
	head := "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: dev\nspec:\n  provider: demo\n"
	for _, tc := range []struct {
		name, doc, want string
		d               Decoder
	}{
		{"own section", head + "  demo: {b: 1, a: [x]}\n", "", Decoder{}},
		{"unknown", head + "  other: {a: 1}\n", "f.yaml:7: spec.other: unknown field (valid: provider, region, zones, ttl, kubernetesVersion, controlPlane, nodeGroups, networking, registry, addons, tags, demo)", Decoder{}},
		{"another provider's", head + "  other: {a: 1}\n", "f.yaml:7: spec.other: is for provider other; this spec's provider is demo", Decoder{Providers: []string{"demo", "other"}}},
		{"twice", head + "  demo: {}\n  demo: {}\n", "f.yaml:8: spec.demo: given twice", Decoder{}},
		{"decoder's problem", head + "  demo:\n    b: 1\n", "f.yaml:8: spec.demo.b: no b here", Decoder{Sections: map[string]SectionDecoder{
			"demo": func(c *Cluster) (any, []FieldError) { return nil, []FieldError{Errorf("spec.demo.b", "no b here")} }}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := tc.d.Decode("f.yaml", []byte(tc.doc))
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := string(cs[0].Section("demo")); got != `{"b":1,"a":["x"]}` {
				t.Fatalf("section %s", got)
			}
			b, err := json.Marshal(cs[0])
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(string(b), `"provider":"demo","controlPlane":{},"networking":{},"demo":{"b":1,"a":["x"]}}}`) {
				t.Fatalf("JSON form %s", b)
			}
			var back Cluster
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.Spec, cs[0].Spec) || len(back.CheckSections()) != 0 {
				t.Fatalf("read back %+v, want %+v", back.Spec, cs[0].Spec)
			}
			back.Spec.Provider = "other"
			if errs := back.CheckSections(); len(errs) != 1 || errs[0].Error() != "spec.demo: is for provider demo; this spec's provider is other" {
				t.Fatalf("CheckSections: %v", errs)
			}
		})
	}
}
