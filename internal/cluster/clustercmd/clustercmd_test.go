package clustercmd

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/aks"
)

var update = flag.Bool("update", false, "rewrite golden files")

func testEnv(t *testing.T, vars map[string]string) (*cli.Env, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var out, errb bytes.Buffer
	home := t.TempDir()
	get := func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		switch k {
		case "NUV_HOME":
			return home
		case "NUV_PROJECT":
			return filepath.Join(home, "project")
		}
		return os.Getenv(k)
	}
	return &cli.Env{Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, Log: cli.Quiet(), Getenv: get, Dir: home}, &out, &errb
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no verb: the help, exit 0", nil, 0, ""},
		{"unknown command", []string{"frob"}, 2, `unknown verb "frob"`},
		{"misspelt verb", []string{"crate"}, 2, `unknown verb "crate"; did you mean "create"?`},
		{"no provider", []string{"create"}, 2, "name a provider (valid: "},
		{"unknown provider", []string{"create", "kind2"}, 2, `unknown provider "kind2" (valid: `},
		{"bad ttl", []string{"create", "local", "--ttl", "soon"}, 2, `nuv cluster create: --ttl "soon" is not a duration (want e.g. 90m, 4h or 2d)`},
		{"unknown flavor", []string{"create", "local", "--flavor", "foo"}, 2, `unknown flavor "foo" (valid: aks, eks, generic, gke, k3s, kind, lks, m8s, osh)`},
		{"unknown version", []string{"create", "local", "--version", "1.30.0"}, 2, `unsupported --version "1.30.0" (valid: 1.36.3)`},
		{"bad name", []string{"create", "local", "Bad_Name"}, 2, `invalid cluster name "Bad_Name"`},
		{"bad nodes", []string{"create", "local", "--nodes", "0"}, 2, "--nodes 0: must be between 1 and 1000"},
		{"bad flag", []string{"create", "local", "--frob"}, 2, "unknown flag: --frob"},
		{"delete unknown", []string{"delete", "nope"}, 1, `delete "nope": no such cluster (no clusters exist)`},
		{"delete nothing", []string{"delete"}, 2, "name a cluster (or --all)"},
		{"stop unknown", []string{"stop", "nope"}, 1, "no such cluster"},
		{"logs unknown", []string{"logs", "nope"}, 1, "no such cluster"},
		{"list bad output", []string{"list", "-o", "xml"}, 2, `--output "xml": accepted values: table, wide, json, yaml`},
		{"status bad output", []string{"status", "dev", "-o", "xml"}, 2, `--output "xml": accepted values: table, wide, json, yaml`},
		{"state bad output", []string{"state", "list", "-o", "text"}, 2, `--output "text": accepted values: table, wide, json, yaml`},
		{"plan bad output", []string{"plan", "-o", "table"}, 2, `--output "table": accepted values: text, json, yaml`},
		{"plan without file", []string{"plan"}, 2, "give a spec file with -f FILE"},
		{"plan missing file", []string{"plan", "-f", "/nonexistent/x.yaml"}, 1, "/nonexistent/x.yaml"},
		{"plan detailed usage error", []string{"plan", "--detailed-exitcode", "--frob"}, 1, "unknown flag: --frob"},
		{"plan detailed no file", []string{"plan", "--detailed-exitcode"}, 1, "give a spec file"},
		{"apply without file", []string{"apply"}, 2, "give a spec file with -f FILE"},
		{"create file and provider", []string{"create", "local", "-f", "x.yaml"}, 2, "not both"},
		{"state no verb", []string{"state"}, 2, "give list, show NAME"},
		{"state unknown verb", []string{"state", "frob", "x"}, 2, `unknown command "frob"`},
		{"state misspelt verb", []string{"state", "shwo", "x"}, 2, `unknown command "shwo" (valid: list, show, unlock, rm, migrate); did you mean "show"?`},
		{"state show unknown", []string{"state", "show", "nope"}, 1, "no state record"},
		{"bad state store", []string{"plan", "-f", "x.yaml", "--state", "s3:bucket"}, 2, "unknown kind"},
		{"bad wait timeout", []string{"apply", "-f", "x.yaml", "--wait-timeout", "soon"}, 2, "--wait-timeout"},
		{"zero wait timeout", []string{"delete", "x", "--wait-timeout", "0s"}, 2, "want a positive duration such as 20m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _, _ := testEnv(t, nil)
			err := Run(context.Background(), env, tt.args)
			if got := cli.ExitCode(err); got != tt.code {
				t.Fatalf("exit code = %d, want %d (err %v)", got, tt.code, err)
			}
			if tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	env, errb, _ := testEnv(t, nil) // help goes to stdout
	if err := Run(context.Background(), env, []string{"create", "-h"}); cli.ExitCode(err) != 0 {
		t.Fatalf("create -h: %v", err)
	}
	for _, want := range []string{"Usage: nuv cluster create PROVIDER", "--nodes", "--flavor", "--ha"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("create -h output lacks %q:\n%s", want, errb)
		}
	}
}

func TestListEmptyAndCorrupt(t *testing.T) {
	env, out, _ := testEnv(t, nil)
	if err := Run(context.Background(), env, []string{"list"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "no clusters") {
		t.Fatalf("empty list: %q", out)
	}
	// A state directory with a broken state.json is reported, not fatal.
	home := env.Getenv("NUV_HOME")
	dir := filepath.Join(home, "clusters", "broken")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Run(context.Background(), env, []string{"list"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "broken") || !strings.Contains(out.String(), "corrupt") {
		t.Fatalf("corrupt cluster not reported:\n%s", out)
	}
	// and it can be deleted
	out.Reset()
	if err := Run(context.Background(), env, []string{"delete", "broken"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("state dir still there: %v", err)
	}
}

func TestTableGolden(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	infos := []cluster.Info{
		{Name: "dev", Provider: "local", Status: cluster.Running, APIURL: "https://127.0.0.1:40001", Nodes: 3, NodesReady: 3, Created: now.Add(-90 * time.Second)},
		{Name: "ha", Provider: "local", Status: cluster.Degraded, APIURL: "https://127.0.0.1:40100", Nodes: 1, NodesReady: 1, HA: true, Created: now.Add(-3 * time.Hour),
			Components: []cluster.Component{{Name: "etcd-0", Running: true}, {Name: "etcd-1"}, {Name: "kube-apiserver-0"}, {Name: "lb", Running: true}}},
		{Name: "old", Provider: "local", Status: cluster.Stopped, APIURL: "https://127.0.0.1:40200", Nodes: 2, NodesReady: -1, Created: now.Add(-72 * time.Hour)},
		{Name: "broken", Provider: "local", Status: cluster.Corrupt, NodesReady: -1, Err: errors.New("cluster state is corrupt")},
	}
	var b bytes.Buffer
	writeTable(&b, infos, now)
	golden := filepath.Join("testdata", "list.golden")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Fatalf("list table differs from %s:\n--- got\n%s--- want\n%s", golden, b.String(), want)
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

func writeSpec(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "specs.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A plan of clusters that do not exist yet needs no cluster: every resource is a create.
func TestPlanNewSpecs(t *testing.T) {
	env, out, _ := testEnv(t, nil)
	f := writeSpec(t, env.Dir, `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: alpha}
spec:
  provider: local
  nodeGroups:
  - {name: web, count: 2, labels: {tier: web}, taints: ["dedicated=web:NoSchedule"]}
  - {name: batch, count: 1, spot: true, instanceType: m5.large}
  registry: true
---
apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: beta}
spec: {provider: local, controlPlane: {count: 3}, local: {flavor: gke}}
`)
	err := Run(context.Background(), env, []string{"plan", "-f", f, "--detailed-exitcode"})
	if cli.ExitCode(err) != 2 {
		t.Fatalf("plan --detailed-exitcode of new clusters: exit %d (%v), want 2", cli.ExitCode(err), err)
	}
	golden := filepath.Join("testdata", "plan-new.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Fatalf("plan differs from %s:\n--- got\n%s--- want\n%s", golden, out.String(), want)
	}
	// The plan wrote nothing: no state record, no cluster.
	if entries, _ := os.ReadDir(filepath.Join(env.Getenv("NUV_HOME"), "state")); len(entries) != 0 {
		t.Fatalf("plan wrote state: %v", entries)
	}
	out.Reset()
	if err := Run(context.Background(), env, []string{"plan", "-f", f, "--only", "beta", "-o", "json"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"action": "create"`) || strings.Contains(out.String(), "alpha") {
		t.Fatalf("json plan of beta:\n%s", out)
	}
	// Local clusters are processes on this machine, not resources Terraform creates.
	tf := filepath.Join(env.Dir, "tf")
	err = Run(context.Background(), env, []string{"plan", "-f", f, "--terraform", tf})
	if err == nil || !strings.Contains(err.Error(), "not supported by this provider: local") {
		t.Fatalf("plan --terraform of local clusters: %v", err)
	}
	if _, err := os.Stat(tf); !os.IsNotExist(err) {
		t.Fatalf("a refused terraform output created %s", tf)
	}
}

func TestSpecErrorsNameFileLineAndPath(t *testing.T) {
	env, _, _ := testEnv(t, nil)
	f := writeSpec(t, env.Dir, `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: alpha}
spec:
  provider: local
  region: eu-west-1
  nodeGroups:
  - name: a
    count: 1
    manager: karpenter
`)
	err := Run(context.Background(), env, []string{"apply", "-f", f})
	if cli.ExitCode(err) != 1 {
		t.Fatalf("exit %d: %v", cli.ExitCode(err), err)
	}
	for _, want := range []string{f + ":6: spec.region: local clusters have no region", f + ":10: spec.nodeGroups[0].manager: local clusters have no Karpenter"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	f = writeSpec(t, env.Dir, "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata: {name: x}\nspec: {provider: ekz}\n")
	err = Run(context.Background(), env, []string{"plan", "-f", f})
	if err == nil || !strings.Contains(err.Error(), f+":4: spec.provider: unknown provider \"ekz\" (valid: ") {
		t.Fatalf("unknown provider: %v", err)
	}
}

// TestWaitTimeoutFlag: --wait-timeout is the flag form of NUV_CLUSTER_WAIT_TIMEOUT: after parsing,
// the environment every provider reads answers it (over the process environment's value), and
// without the flag the process environment's value stands.
func TestWaitTimeoutFlag(t *testing.T) {
	tests := []struct {
		name, env string
		args      []string
		want      time.Duration
	}{
		{"default", "", nil, cluster.DefaultWaitTimeout},
		{"environment", "10m", nil, 10 * time.Minute},
		{"flag", "", []string{"--wait-timeout", "90s"}, 90 * time.Second},
		{"flag over environment", "10m", []string{"--wait-timeout=3s"}, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _, _ := testEnv(t, map[string]string{cluster.EnvWaitTimeout: tt.env})
			c, err := newCmdCtx(env)
			if err != nil {
				t.Fatal(err)
			}
			fs := flags(c.env, "apply")
			waitFlag(fs, c)
			if err := parse(fs, tt.args); err != nil {
				t.Fatal(err)
			}
			ap, ok := c.providers["aks"].(*aks.Provider)
			if !ok {
				t.Fatalf("the aks provider is a %T", c.providers["aks"])
			}
			for who, getenv := range map[string]func(string) string{"the command": c.env.Getenv, "the aks provider": ap.Getenv} {
				got, err := cluster.WaitTimeout(getenv)
				if err != nil || got != tt.want {
					t.Fatalf("bound seen by %s = %v, %v; want %v", who, got, err, tt.want)
				}
			}
		})
	}
}
