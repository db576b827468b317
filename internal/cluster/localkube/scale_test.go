package localkube

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	corev1 "k8s.io/api/core/v1"
	kwokconfig "sigs.k8s.io/kwok/pkg/apis/config/v1alpha1"
	"sigs.k8s.io/yaml"
)

// TestNodeLimits: a local cluster has between 1 and MaxNodes nodes, however they are asked for.
func TestNodeLimits(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    CreateOptions
		wantErr string // "" for valid
	}{
		{"one", CreateOptions{Nodes: 1}, ""},
		{"the most", CreateOptions{Nodes: MaxNodes}, ""},
		{"one too many", CreateOptions{Nodes: MaxNodes + 1}, fmt.Sprintf("--nodes %d: must be between 1 and %d", MaxNodes+1, MaxNodes)},
		{"negative", CreateOptions{Nodes: -1}, "--nodes -1: must be between 1 and 1000"},
		{"groups at the most", CreateOptions{NodeGroups: []NodeGroup{{Name: "a", Count: MaxNodes - 1}, {Name: "b", Count: 1}}}, ""},
		{"groups over", CreateOptions{NodeGroups: []NodeGroup{{Name: "a", Count: MaxNodes}, {Name: "b", Count: 1}}}, "1001 nodes in all: a local cluster has at most 1000"},
		{"one group over", CreateOptions{NodeGroups: []NodeGroup{{Name: "a", Count: MaxNodes + 1}}}, `node group "a": count 1001 must be between 0 and 1000`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
}

// TestSystemTaintsAreNotGroupDrift: the taints the control plane manages (node.kubernetes.io/...)
// are neither compared with a group's taints nor dropped when a group's taints are patched.
func TestSystemTaintsAreNotGroupDrift(t *testing.T) {
	notReady := corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule}
	gpu := corev1.Taint{Key: "nvidia.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	for _, tc := range []struct {
		name        string
		have, want  []corev1.Taint
		same        bool
		keptOnPatch []corev1.Taint
	}{
		{"none", nil, nil, true, nil},
		{"only a system taint", []corev1.Taint{notReady}, nil, true, []corev1.Taint{notReady}},
		{"group taint and a system taint", []corev1.Taint{notReady, gpu}, []corev1.Taint{gpu}, true, []corev1.Taint{notReady}},
		{"group taint missing", []corev1.Taint{notReady}, []corev1.Taint{gpu}, false, []corev1.Taint{notReady}},
		{"group taint extra", []corev1.Taint{gpu}, nil, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameTaints(withoutSystemTaints(tc.have), tc.want); got != tc.same {
				t.Errorf("same = %v, want %v", got, tc.same)
			}
			if got := systemTaints(tc.have); !reflect.DeepEqual(got, tc.keptOnPatch) {
				t.Errorf("kept on patch: %v, want %v", got, tc.keptOnPatch)
			}
		})
	}
}

// TestNodesCarryTheLabelsControllersWouldAdd: the node lifecycle controller adds the beta OS and
// architecture labels to nodes without them (a patch per node); nuv's nodes have them.
func TestNodesCarryTheLabelsControllersWouldAdd(t *testing.T) {
	for _, f := range append([]string{""}, cluster.FlavorNames()...) {
		fl, err := cluster.LookupFlavor(f)
		if err != nil {
			t.Fatal(err)
		}
		n := nodeSpec(fl, "c", KubeVersion, NodeGroup{Name: DefaultNodeGroup, Count: 1}, 0)
		for beta, ga := range map[string]string{"beta.kubernetes.io/os": "kubernetes.io/os", "beta.kubernetes.io/arch": "kubernetes.io/arch"} {
			if n.Labels[beta] == "" || n.Labels[beta] != n.Labels[ga] {
				t.Errorf("flavor %q: %s=%q, %s=%q", f, beta, n.Labels[beta], ga, n.Labels[ga])
			}
		}
		if n.Annotations["node.alpha.kubernetes.io/ttl"] != "0" {
			t.Errorf("flavor %q: ttl annotation %q", f, n.Annotations["node.alpha.kubernetes.io/ttl"])
		}
	}
}

// TestKwokOptions: kwok gets a second configuration file, a KwokConfiguration with nuv's
// parallelism, and the flags that tune it for many nodes.
func TestKwokOptions(t *testing.T) {
	b, err := kwokOptions()
	if err != nil {
		t.Fatal(err)
	}
	var c kwokconfig.KwokConfiguration
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		t.Fatalf("not a KwokConfiguration: %v\n%s", err, b)
	}
	if c.Kind != kwokconfig.KwokConfigurationKind || c.APIVersion != kwokconfig.GroupVersion.String() {
		t.Fatalf("kind %s/%s", c.APIVersion, c.Kind)
	}
	o := c.Options
	if o.NodePlayStageParallelism != kwokParallelism || o.NodeLeaseParallelism != kwokParallelism || o.PodPlayStageParallelism != kwokParallelism {
		t.Fatalf("parallelism %+v", o)
	}
	s := &state{Name: "c", Ports: map[string]int{}}
	args := map[string][]string{}
	for _, comp := range plan("/state", s) {
		args[comp.Name] = comp.Args
	}
	for comp, want := range map[string][]string{
		"kwok":                    {"--config=/state/config/kwok.yaml", "--config=/state/config/kwok-options.yaml", "--node-lease-duration-seconds=120", "--v=WARN"},
		"kube-controller-manager": {"--node-monitor-grace-period=150s", "--controllers=*,bootstrapsigner,tokencleaner,-ttl"},
		"kube-apiserver":          {"--disable-admission-plugins=TaintNodesByCondition"},
	} {
		for _, w := range want {
			found := false
			for _, a := range args[comp] {
				found = found || a == w
			}
			if !found {
				t.Errorf("%s runs without %s: %v", comp, w, args[comp])
			}
		}
	}
}

// TestReadyProgress: a wait for nodes reports "nodes Ready K/N (M made)" once it has taken
// progressAfter, at most every progressEvery, and then says when every node is Ready; a short wait
// says nothing.
func TestReadyProgress(t *testing.T) {
	var out bytes.Buffer
	log := cli.NewLogger(&out, 0)
	short := readyCounter{want: 3, log: log, start: time.Now(), ready: map[string]bool{"a": true, "b": true, "c": true}}
	short.report()
	if !short.done() || out.Len() != 0 {
		t.Fatalf("a short wait printed %q", out.String())
	}
	c := readyCounter{want: 1000, log: log, start: time.Now().Add(-progressAfter), ready: map[string]bool{}}
	for i := 0; i < 600; i++ {
		c.ready[fmt.Sprintf("n%d", i)] = i < 430
	}
	c.report()
	c.report() // within progressEvery: nothing
	c.lastReport = c.lastReport.Add(-progressEvery)
	for i := 600; i < 1000; i++ {
		c.ready[fmt.Sprintf("n%d", i)] = true
	}
	for i := 0; i < 600; i++ {
		c.ready[fmt.Sprintf("n%d", i)] = true
	}
	if !c.done() {
		t.Fatal("1000 of 1000 Ready is not done")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || strings.TrimSpace(lines[0]) != "nodes Ready 430/1000 (600 made)" || !strings.HasPrefix(strings.TrimSpace(lines[1]), "nodes Ready 1000/1000 after ") {
		t.Fatalf("progress:\n%s", out.String())
	}
	if readyTimeout(1000) != 2*time.Minute {
		t.Errorf("timeout for 1000 nodes %s", readyTimeout(1000))
	}
}
