package testverbs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/report"
)

func mapEnv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestPrefixArg(t *testing.T) {
	for _, tc := range []struct {
		env    string
		args   []string
		prefix string
		rest   []string
	}{
		{"", nil, "", nil},
		{"", []string{"T=Whisk"}, "Whisk", nil},
		{"Env", nil, "Env", nil},
		{"Env", []string{"T=Arg", "-v"}, "Arg", []string{"-v"}},
		{"", []string{"T="}, "", nil},
	} {
		env := &cli.Env{Getenv: mapEnv(map[string]string{"T": tc.env})}
		p, rest := prefixArg(env, tc.args)
		if p != tc.prefix || !reflect.DeepEqual(rest, tc.rest) {
			t.Errorf("%v env %q: got %q %v", tc.args, tc.env, p, rest)
		}
	}
}

func TestUtestArgs(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		extra  []string
		want   string
	}{
		{"", nil, "test -count=1 ./operator/..."},
		{"TestReconcile", nil, "test -count=1 -run ^TestReconcile ./operator/..."},
		{"Test.*", []string{"-v"}, `test -count=1 -run ^Test\.\* -v ./operator/...`},
		{"", []string{"-count=3"}, "test -count=3 ./operator/..."},
		{"", []string{"-test.count", "2"}, "test -test.count 2 ./operator/..."},
	} {
		if got := strings.Join(UtestArgs(tc.prefix, tc.extra), " "); got != tc.want {
			t.Errorf("%q: got %s want %s", tc.prefix, got, tc.want)
		}
	}
}

func TestLeaked(t *testing.T) {
	before := []string{"namespaces nuv-system", "pods default/x"}
	after := []string{"namespaces nuv-system", "statefulsets.apps default/whisk-redis"}
	if got := leaked(before, after); !reflect.DeepEqual(got, []string{"statefulsets.apps default/whisk-redis"}) {
		t.Errorf("leaked: %v", got)
	}
	if got := leaked(before, nil); len(got) != 0 {
		t.Errorf("nothing after: %v", got)
	}
	if s := summarize([]string{"a", "b", "c"}, 2); s != "a, b and 1 more" {
		t.Errorf("summarize: %s", s)
	}
}

// TestUtestExitCodes runs real `go test` on a tiny operator module: a passing filter exits 0, a
// failing one exits with go test's code, and the step is reported for all-kubes.
func TestUtestExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	p := t.TempDir()
	os.WriteFile(filepath.Join(p, "go.mod"), []byte("module example.com/op\n\ngo 1.22\n"), 0o644)
	os.MkdirAll(filepath.Join(p, "operator"), 0o755)
	os.WriteFile(filepath.Join(p, "operator", "op_test.go"), []byte(`package operator
import "testing"
func TestPass(t *testing.T) {}
func TestFail(t *testing.T) { t.Fatal("broken on purpose") }
`), 0o644)
	result := filepath.Join(t.TempDir(), "result.json")
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"T=TestPass"}, 0},
		{[]string{"T=TestFail"}, 1},
		{nil, 1},
		{[]string{"--", "-run", "TestPass"}, 0},
		{[]string{"T=TestNoSuch"}, 1},
		{[]string{"--", "-run", "TestNoSuch"}, 1},
		{[]string{"T=TestPass", "--", "-v"}, 0},
	} {
		var out bytes.Buffer
		env := &cli.Env{Streams: cli.Streams{Out: &out, Err: &out}, Log: cli.Quiet(), Dir: p,
			Getenv: mapEnv(map[string]string{"NUV_PROJECT": p, report.EnvResult: result, "HOME": os.Getenv("HOME")})}
		err := runUtest(context.Background(), env, tc.args)
		if got := cli.ExitCode(err); got != tc.code {
			t.Errorf("%v: exit %d want %d (%v)\n%s", tc.args, got, tc.code, err, out.String())
		}
		if strings.Contains(out.String(), "(cached)") {
			t.Errorf("%v: a cached result was reported:\n%s", tc.args, out.String())
		}
		if strings.Contains(strings.Join(tc.args, " "), "NoSuch") && !strings.Contains(err.Error(), "no test ran") {
			t.Errorf("%v: error %q does not say no test ran", tc.args, err)
		}
		res, rerr := report.ReadChildResult(result)
		if rerr != nil || len(res.Steps) != 1 || (res.Steps[0].Status == report.Passed) != (tc.code == 0) {
			t.Errorf("%v: result %+v %v", tc.args, res, rerr)
		}
	}
}

func TestResolveUsesNUVCLUSTERAndKUBE(t *testing.T) {
	p := t.TempDir()
	os.MkdirAll(filepath.Join(p, "clusters"), 0o755)
	for _, n := range []string{"a", "b"} {
		kc := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n"
		os.WriteFile(filepath.Join(p, "clusters", n+".kubeconfig"), []byte(kc), 0o600)
	}
	env := &cli.Env{Dir: p, Log: cli.Quiet(), Getenv: mapEnv(map[string]string{
		"NUV_PROJECT": p, "NUV_HOME": t.TempDir(), "NUV_CLUSTER": "b", "KUBE": "eks"})}
	tg, err := resolve(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Name != "b" || tg.Type != "eks" || tg.Kubeconfig != filepath.Join(p, "clusters", "b.kubeconfig") {
		t.Errorf("target: %+v", tg)
	}
	env.Getenv = mapEnv(map[string]string{"NUV_PROJECT": p, "NUV_HOME": t.TempDir()})
	if _, err := resolve(context.Background(), env); err == nil {
		t.Error("no selection and no KUBECONFIG resolved to something")
	}
}

func TestBadArguments(t *testing.T) {
	env := &cli.Env{Streams: cli.Streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, Log: cli.Quiet(), Getenv: mapEnv(nil), Dir: t.TempDir()}
	for _, c := range []struct {
		cmd  cli.Command
		args []string
	}{
		{DtestCommand(), []string{"extra"}},
		{DtestCommand(), []string{"--bogus"}},
		{ItestCommand(), []string{"stray"}},
		{TestCommand(), []string{"--timeout", "soon"}},
	} {
		if code := cli.ExitCode(c.cmd.Run(context.Background(), env, c.args)); code != 2 {
			t.Errorf("%s %v: exit %d, want 2", c.cmd.Name, c.args, code)
		}
	}
}
