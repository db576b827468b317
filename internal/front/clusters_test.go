package front

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/clustercache"
	"github.com/nuv-dev/nuv/internal/cluster/clustercmd"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	nuvproviders "github.com/nuv-dev/nuv/internal/cluster/providers"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/proc"
)

// TestProvidersAsRegistry: the front knows nuv's providers, and which are clouds with cached
// answers, as the registry the full program builds them from.
func TestProvidersAsRegistry(t *testing.T) {
	var want, got []string
	for _, reg := range nuvproviders.Registry().All() {
		want = append(want, reg.Name+map[bool]string{true: " (cloud)"}[reg.Cloud])
	}
	for _, p := range providers {
		got = append(got, p.name+map[bool]string{true: " (cloud)"}[p.cloud])
	}
	if !slices.Equal(got, want) {
		t.Errorf("the front's providers are %q, the registry's %q", got, want)
	}
}

// fixture is a NUV_HOME and project holding clusters of every kind the front answers for.
type fixture struct {
	home, project string
	vars          map[string]string
}

func (f *fixture) getenv(k string) string { return f.vars[k] }

func (f *fixture) env(out, errw *bytes.Buffer) *cli.Env {
	return &cli.Env{Streams: cli.Streams{In: strings.NewReader(""), Out: out, Err: errw}, Log: cli.NewLogger(errw, 0),
		Getenv: f.getenv, Dir: f.project, Exe: "/nonexistent/nuv"}
}

// newFixture writes recorded states, the same a nuv would have written: local clusters' records
// and pid files (running, stopped, degraded, being created, HA with a flavor and safe durability),
// state-store records (with expiries, a failed update, a record whose cluster is gone, a corrupt
// one), and every cloud's cached answer.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{home: filepath.Join(root, "home"), project: filepath.Join(root, "project")}
	f.vars = map[string]string{"NUV_HOME": f.home, "HOME": root, "NUV_PROJECT": f.project}
	for _, d := range []string{f.home, filepath.Join(f.project, "clusters")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	ctx := context.Background()
	// Ages far from the units' boundaries: the two paths read the clock a few milliseconds apart.
	days := func(d float64) time.Time { return now.Add(-time.Duration(d * 24 * float64(time.Hour))) }
	self := os.Getpid() // a live process for the components a fixture shows running

	type localFix struct {
		name, phase, flavor, durability string
		ha                              bool
		groups                          []spec.NodeGroup
		running                         []string
	}
	n := func(v int) *int { return &v }
	for _, lf := range []localFix{
		{name: "lima", phase: "running", flavor: "eks", durability: "safe", ha: true,
			groups: []spec.NodeGroup{{Name: "a", Count: n(3)}, {Name: "b", Min: n(2), Max: n(5)}}},
		{name: "mike", phase: "running", running: []string{"etcd", "kube-apiserver"}},
		{name: "november", phase: "creating", running: []string{"etcd"}},
		{name: "oscar", phase: "running", groups: []spec.NodeGroup{{Name: "default", Count: n(0)}},
			running: []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}},
	} {
		dir := paths.Locator{Home: f.home}.ControlPlane(lf.name)
		if err := os.MkdirAll(filepath.Join(dir, "pids"), 0o700); err != nil {
			t.Fatal(err)
		}
		c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: lf.name},
			Spec: spec.Spec{Provider: "local", KubernetesVersion: "1.36.3", NodeGroups: lf.groups}}
		if lf.ha {
			c.Spec.ControlPlane.Count = 3
		}
		if lf.flavor != "" || lf.durability != "" {
			if err := c.SetSection("local", map[string]string{"flavor": lf.flavor, "durability": lf.durability}); err != nil {
				t.Fatal(err)
			}
		}
		ports := map[string]int{"etcd-client": 20001, "etcd-peer": 20002, "kube-apiserver": 20003, "kube-controller-manager": 20004,
			"kube-scheduler": 20005, "kwok": 20006}
		if lf.ha {
			ports = map[string]int{"etcd-0-client": 21001, "etcd-1-client": 21002, "etcd-2-client": 21003, "kube-apiserver-0": 21004,
				"kube-apiserver-1": 21005, "lb": 21006, "kube-controller-manager": 21007, "kube-scheduler": 21008, "kwok": 21009}
		}
		data, _ := json.Marshal(map[string]any{"kubeconfig": filepath.Join(f.project, "clusters", lf.name+".kubeconfig"),
			"apiURL": "https://127.0.0.1:20003", "binary": "/opt/nuv-kube", "binarySource": "given by $NUV_KUBE_BIN", "ports": ports})
		rec := &state.Record{Name: lf.name, Provider: "local", Phase: state.Phase(lf.phase), Spec: c, Created: days(3.5), Data: data}
		if err := state.WriteFile(filepath.Join(dir, "state.json"), rec); err != nil {
			t.Fatal(err)
		}
		for _, comp := range lf.running {
			if err := proc.WriteRecord(filepath.Join(dir, "pids", comp+".pid"), self); err != nil {
				t.Fatal(err)
			}
		}
	}

	store := state.Dir{Path: paths.Locator{Home: f.home}.StateStore()}
	in := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	for _, r := range []*state.Record{
		{Name: "lima", Provider: "local", Phase: state.UpdateFailed, ExpiresAt: in(3*time.Hour + 30*time.Minute)},
		{Name: "mike", Provider: "local", Phase: state.Running},
		{Name: "charlie", Provider: "eks", Phase: state.Running, ExpiresAt: in(-2*time.Hour - 20*time.Minute),
			Spec: &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "charlie"}, Spec: spec.Spec{Provider: "eks", Region: "us-east-1"}}},
		{Name: "delta", Provider: "aks", Phase: state.Running},
		{Name: "zulu", Provider: "gke", Phase: state.DeletionFailed, Created: days(10.5)},
		{Name: "oscar", Provider: "kind", Phase: state.Running}, // another provider's record of the same name: no phase for local oscar
	} {
		if err := store.Save(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(store.Path, "broken.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store.Path, "misnamed.json"), []byte(`{"name":"other","provider":"eks"}`), 0o600); err != nil {
		t.Fatal(err)
	}

	fetched := now.Add(-150 * time.Second) // "2m ago"
	cache := clustercache.Cache{Dir: clustercache.Dir(f.home), TTL: time.Hour, Now: func() time.Time { return fetched }}
	for p, infos := range map[string][]cluster.Info{
		"eks": {{Name: "charlie", Provider: "eks", Status: cluster.Running, APIURL: "https://charlie.eks.example", Kubeconfig: filepath.Join(f.project, "clusters", "charlie.kubeconfig"),
			Version: "1.35", Nodes: 3, NodesReady: 2, Created: days(2.5), Flavor: "eks"}},
		"aws": nil,
		"aks": {{Name: "delta", Provider: "aks", Status: cluster.Corrupt, NodesReady: -1, Nodes: 2, Err: errors.New("ManagedClusters_Get: quota exceeded")}},
		"gke": {{Name: "echo", Provider: "gke", Status: cluster.Degraded, HA: true, NodesReady: 1, Nodes: 4, Created: days(0.6),
			Components: []cluster.Component{{Name: "pool-a", Running: true}, {Name: "pool-b"}}}},
	} {
		if err := cache.Save(p, clustercache.Key(p, f.project, f.getenv), infos); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// full runs `nuv cluster ARGS` as nuv's full program does (package clustercmd, as internal/app
// dispatches it): stdout and the exit code.
func full(t *testing.T, f *fixture, args ...string) (string, int) {
	t.Helper()
	var out, errw bytes.Buffer
	err := cli.Prefix("nuv cluster", clustercmd.Run(context.Background(), f.env(&out, &errw), args))
	if code := cli.ExitCode(err); code != 0 && code != exitNotRunning {
		t.Fatalf("full program: nuv cluster %s: %v\n%s", strings.Join(args, " "), err, errw.String())
	}
	return out.String(), cli.ExitCode(err)
}

// fromFront answers `nuv cluster ARGS` as the slim front does; ok false: it would hand over.
func fromFront(t *testing.T, f *fixture, args ...string) (string, int, bool) {
	t.Helper()
	var out, errw bytes.Buffer
	a, ok := answerCluster(context.Background(), f.env(&out, &errw), args[0], args[1:])
	if errw.Len() > 0 || out.Len() > 0 {
		t.Errorf("the front wrote to its streams before it answered: stdout %q, stderr %q", out.String(), errw.String())
	}
	return string(a.out), cli.ExitCode(cli.Prefix("nuv cluster", a.err)), ok
}

// TestClusterVerbsSameAsFull: on the same recorded states the front answers `nuv cluster list`
// and `nuv cluster status NAME` in every format with the full program's bytes and exit code.
func TestClusterVerbsSameAsFull(t *testing.T) {
	f := newFixture(t)
	var cmds [][]string
	for _, o := range [][]string{nil, {"-o", "table"}, {"-o", "wide"}, {"-o", "json"}, {"--output=yaml"}, {"-owide"}} {
		cmds = append(cmds, append([]string{"list"}, o...))
		for _, name := range []string{"lima", "mike", "charlie", "delta"} {
			cmds = append(cmds, append([]string{"status", name}, o...))
		}
	}
	cmds = append(cmds, []string{"status", "-o", "json", "mike"}) // flags before the name
	for _, args := range cmds {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			want, wantCode := full(t, f, args...)
			got, code, ok := fromFront(t, f, args...)
			if !ok {
				t.Fatalf("the front handed `nuv cluster %s` over; want it answered", strings.Join(args, " "))
			}
			if got != want || code != wantCode {
				t.Errorf("front (exit %d):\n%s\nfull program (exit %d):\n%s", code, got, wantCode, want)
			}
		})
	}
	// The fixture shows what it is meant to: every status, phases, expiries, cached ages.
	list, _ := full(t, f, "list")
	for _, s := range []string{"lima     local  stopped [update_failed]", "mike     local  degraded (down: kube-controller-manager,kube-scheduler,kwok)",
		"november  local", "creating", "running (2m ago)", "corrupt (2m ago): ManagedClusters_Get: quota exceeded", "absent [deletion_failed]",
		"in 3h", "expired 2h ago", "?/1", "?/5"} {
		if !strings.Contains(list, s) && !strings.Contains(strings.Join(strings.Fields(list), " "), strings.Join(strings.Fields(s), " ")) {
			t.Errorf("the fixture's list lacks %q:\n%s", s, list)
		}
	}
}

// TestClusterVerbsHandOver: whatever the front cannot answer as the full program would goes to
// it, nothing printed.
func TestClusterVerbsHandOver(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		setup func(t *testing.T, f *fixture)
	}{
		{"refresh", []string{"list", "--refresh"}, nil},
		{"help", []string{"list", "-h"}, nil},
		{"deprecated --json", []string{"list", "--json"}, nil},
		{"unknown flag", []string{"list", "--all"}, nil},
		{"bad format", []string{"list", "-o", "name"}, nil},
		{"extra argument", []string{"list", "x"}, nil},
		{"status without a name", []string{"status"}, nil},
		{"status of two", []string{"status", "lima", "mike"}, nil},
		{"no record: every provider is asked", []string{"status", "november"}, nil},
		{"record of an unknown provider", []string{"status", "x"}, func(t *testing.T, f *fixture) {
			writeFile(t, filepath.Join(f.home, "state", "x.json"), `{"name":"x","provider":"vsphere"}`)
		}},
		{"cloud cluster not in its cached answer", []string{"status", "zulu"}, nil},
		{"kind record", []string{"status", "oscar"}, func(t *testing.T, f *fixture) {
			_ = os.Remove(filepath.Join(f.home, "state", "oscar.json"))
			writeFile(t, filepath.Join(f.home, "state", "oscar.json"), `{"name":"oscar","provider":"kind"}`)
		}},
		{"kind cluster marked", []string{"list"}, func(t *testing.T, f *fixture) {
			writeFile(t, filepath.Join(f.home, "kind", "k", "control-plane.id"), "abc\n")
		}},
		{"stale cache", []string{"list"}, func(t *testing.T, f *fixture) { f.vars["NUV_CLUSTER_CACHE_TTL"] = "1s" }},
		{"cache off", []string{"status", "charlie"}, func(t *testing.T, f *fixture) { f.vars["NUV_CLUSTER_CACHE_TTL"] = "0" }},
		{"bad cache TTL", []string{"list"}, func(t *testing.T, f *fixture) { f.vars["NUV_CLUSTER_CACHE_TTL"] = "soon" }},
		{"missing cache", []string{"list"}, func(t *testing.T, f *fixture) { _ = os.Remove(filepath.Join(f.home, "cache", "clusters", "aws.json")) }},
		{"corrupt cache", []string{"status", "charlie"}, func(t *testing.T, f *fixture) {
			writeFile(t, filepath.Join(f.home, "cache", "clusters", "eks.json"), "{")
		}},
		{"other account", []string{"list"}, func(t *testing.T, f *fixture) { f.vars["AWS_PROFILE"] = "prod" }},
		{"kube state store", []string{"list"}, func(t *testing.T, f *fixture) { f.vars["NUV_STATE"] = "kube:nuv@" + filepath.Join(f.home, "kc") }},
		{"bad state store", []string{"list"}, func(t *testing.T, f *fixture) { f.vars["NUV_STATE"] = "s3:bucket" }},
		{"bad lock wait", []string{"list"}, func(t *testing.T, f *fixture) { f.vars["NUV_LOCK_WAIT"] = "forever" }},
		{"bad registry port", []string{"list"}, func(t *testing.T, f *fixture) { f.vars["NUV_REGISTRY_PORT"] = "http" }},
		{"no NUV_HOME yet", []string{"list"}, func(t *testing.T, f *fixture) { f.vars["NUV_HOME"] = filepath.Join(f.home, "new") }},
		{"local record of an older nuv", []string{"list"}, func(t *testing.T, f *fixture) {
			writeFile(t, filepath.Join(f.home, "clusters", "mike", "state.json"), `{"name":"mike","provider":"local","ports":{"etcd-client":1},"phase":"created"}`)
		}},
		{"corrupt local record", []string{"status", "mike"}, func(t *testing.T, f *fixture) {
			writeFile(t, filepath.Join(f.home, "clusters", "mike", "state.json"), `{"generation":1,`)
		}},
		{"local cluster gone", []string{"status", "mike"}, func(t *testing.T, f *fixture) {
			if err := os.RemoveAll(filepath.Join(f.home, "clusters", "mike")); err != nil {
				t.Fatal(err)
			}
		}},
		{"another verb", []string{"delete", "lima"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			if out, code, ok := fromFront(t, f, tc.args...); ok {
				t.Errorf("the front answered `nuv cluster %s` (exit %d):\n%s\nwant it handed to the full program", strings.Join(tc.args, " "), code, out)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationClusterVerbsLocal: with a real local cluster (its processes and API up, nodes
// counted over REST) the front answers `nuv cluster list` and `nuv cluster status NAME` in every
// format as the full program does, in process and as the built binary (which never looks at
// NUV_FULL then).
func TestIntegrationClusterVerbsLocal(t *testing.T) {
	c := localtest.Start(t, localtest.Options{Nodes: 2})
	f := &fixture{home: c.Home, project: c.Project}
	f.vars = map[string]string{"NUV_HOME": c.Home, "HOME": filepath.Dir(c.Home), "NUV_PROJECT": c.Project}
	ctx := context.Background()
	rec := &state.Record{Name: c.Name, Provider: "local", Phase: state.Running,
		Spec: &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: c.Name}, Spec: spec.Spec{Provider: "local"}}}
	if err := (state.Dir{Path: paths.Locator{Home: c.Home}.StateStore()}).Save(ctx, rec); err != nil {
		t.Fatal(err)
	}
	// The clouds answered "none" a moment ago (as an unconfigured cloud does).
	cache := clustercache.Cache{Dir: clustercache.Dir(c.Home), TTL: time.Hour}
	for _, p := range []string{"aks", "aws", "eks", "gke"} {
		if err := cache.Save(p, clustercache.Key(p, c.Project, f.getenv), nil); err != nil {
			t.Fatal(err)
		}
	}
	bin := t.TempDir()
	front := buildFront(t, bin)
	env := append(environ(EnvFull, "NUV_FRONT", "KUBECONFIG", "NUV_CLUSTER", "NUV_STATE", "NUV_CLUSTER_CACHE_TTL", "NUV_LOCK_WAIT", "AWS_PROFILE",
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AZURE_SUBSCRIPTION_ID", "CLOUDSDK_CORE_PROJECT", "GOOGLE_CLOUD_PROJECT",
		"NUV_HOME", "NUV_PROJECT", "HOME"), EnvFull+"="+filepath.Join(bin, "missing"))
	for k, v := range f.vars {
		env = append(env, k+"="+v)
	}
	for _, args := range [][]string{{"list"}, {"list", "-o", "wide"}, {"list", "-o", "json"}, {"list", "-o", "yaml"},
		{"status", c.Name}, {"status", c.Name, "-o", "wide"}, {"status", c.Name, "-o", "json"}, {"status", c.Name, "-o", "yaml"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			// The cluster is seconds old: AGE may tick between two runs, so a few tries.
			var want, got string
			var binary result
			for try := 0; try < 3; try++ {
				want, _ = full(t, f, args...)
				var code int
				var ok bool
				got, code, ok = fromFront(t, f, args...)
				if !ok || code != 0 {
					t.Fatalf("the front: handed over %v, exit %d; want it answered, exit 0", !ok, code)
				}
				binary = run(t, c.Project, env, append([]string{front, "cluster"}, args...)...)
				if got == want && binary.out == want {
					break
				}
			}
			if got != want || binary.out != want || binary.code != 0 {
				t.Errorf("front in process:\n%s\nfront binary (exit %d, stderr %q):\n%s\nfull program:\n%s", got, binary.code, binary.err, binary.out, want)
			}
			if args[len(args)-1] == "wide" && !strings.Contains(got, " 2/2 ") {
				t.Errorf("want the 2 Ready nodes counted over the API:\n%s", got)
			}
		})
	}
}

// TestClusterVerbsNoClustersSameAsFull: with no cluster anywhere (every cloud answered none) the
// front prints the full program's hint, or an empty list in the machine forms.
func TestClusterVerbsNoClustersSameAsFull(t *testing.T) {
	root := t.TempDir()
	f := &fixture{home: filepath.Join(root, "home"), project: filepath.Join(root, "project")}
	f.vars = map[string]string{"NUV_HOME": f.home, "HOME": root, "NUV_PROJECT": f.project}
	if err := os.MkdirAll(f.home, 0o700); err != nil {
		t.Fatal(err)
	}
	cache := clustercache.Cache{Dir: clustercache.Dir(f.home), TTL: time.Hour}
	for _, p := range []string{"aks", "aws", "eks", "gke"} {
		if err := cache.Save(p, clustercache.Key(p, f.project, f.getenv), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"list"}, {"list", "-o", "wide"}, {"list", "-o", "json"}, {"list", "-o", "yaml"}} {
		want, wantCode := full(t, f, args...)
		got, code, ok := fromFront(t, f, args...)
		if !ok || got != want || code != wantCode {
			t.Errorf("nuv cluster %s: front (answered %v, exit %d):\n%s\nfull program (exit %d):\n%s", strings.Join(args, " "), ok, code, got, wantCode, want)
		}
	}
}
