package front

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/deploy"
	"github.com/nuv-dev/nuv/internal/deploy/deploycmd"
	"github.com/nuv-dev/nuv/internal/deploy/rendercache"
	"github.com/nuv-dev/nuv/internal/kube"
)

// statusFixture is a project (linking this checkout's operator and instance files) with a real
// local cluster, and the environment both programs see.
type statusFixture struct {
	project string
	vars    map[string]string
}

// getenv is the fixture's variables, else the test process's without the selections and image
// choices a developer's shell may hold.
func (f *statusFixture) getenv(k string) string {
	if v, ok := f.vars[k]; ok {
		return v
	}
	switch k {
	case kube.EnvCluster, kube.EnvType, kube.EnvKubeconfig, "MY_OPERATOR_IMAGE", "TAG", "WHISK", "NUV_OPERATOR_DIR", "NUV_OPERATOR_MAIN",
		"DETECT_FORCE", "NUV_STATE", "NUV_PROJECT":
		return ""
	}
	return os.Getenv(k)
}

func (f *statusFixture) env(out, errw *bytes.Buffer) *cli.Env {
	return &cli.Env{Streams: cli.Streams{In: strings.NewReader(""), Out: out, Err: errw}, Log: cli.NewLogger(errw, 0),
		Getenv: f.getenv, Dir: f.project, Exe: "/nonexistent/nuv"}
}

// fullStatus runs `nuv status ARGS` as nuv's full program does (package deploycmd, as
// internal/app dispatches it): stdout and the exit code.
func fullStatus(t *testing.T, f *statusFixture, args ...string) (string, int) {
	t.Helper()
	var out, errw bytes.Buffer
	for _, c := range deploycmd.NewCommands() {
		if c.Name == "status" {
			err := cli.Prefix("nuv status", c.Run(context.Background(), f.env(&out, &errw), args))
			if err != nil {
				t.Fatalf("full program: nuv status %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errw.String())
			}
			return out.String(), cli.ExitCode(err)
		}
	}
	t.Fatal("no status command in deploycmd")
	return "", 0
}

// frontStatus answers `nuv status ARGS` as the slim front does; ok false: it would hand over.
func frontStatus(t *testing.T, f *statusFixture, args ...string) (string, bool) {
	t.Helper()
	var out, errw bytes.Buffer
	a, ok := answerStatus(context.Background(), f.env(&out, &errw), args)
	if errw.Len() > 0 || out.Len() > 0 {
		t.Errorf("the front wrote to its streams before it answered: stdout %q, stderr %q", out.String(), errw.String())
	}
	return string(a.out), ok
}

// sameAsFull checks that the front answers `nuv status ARGS` with the full program's bytes, in
// process and (bin not "") as the built binary with NUV_FULL pointing nowhere. Whisks' conditions
// may move between two reads, so a few tries.
func sameAsFull(t *testing.T, f *statusFixture, bin string, env []string, args ...string) string {
	t.Helper()
	var want, got string
	var binary result
	for try := 0; try < 3; try++ {
		want, _ = fullStatus(t, f, args...)
		var ok bool
		if got, ok = frontStatus(t, f, args...); !ok {
			t.Fatalf("the front handed `nuv status %s` over; want it answered", strings.Join(args, " "))
		}
		binary = result{out: want}
		if bin != "" {
			binary = run(t, f.project, env, append([]string{bin, "status"}, args...)...)
		}
		if got == want && binary.out == want && binary.code == 0 {
			return want
		}
		time.Sleep(time.Second)
	}
	t.Errorf("nuv status %s: front in process:\n%s\nfront binary (exit %d, stderr %q):\n%s\nfull program:\n%s",
		strings.Join(args, " "), got, binary.code, binary.err, binary.out, want)
	return want
}

var statusForms = [][]string{nil, {"-o", "table"}, {"-o", "wide"}, {"-o", "json"}, {"--output=yaml"}, {"-owide"}}

// TestIntegrationStatusSameAsFull: with a real local cluster, before the operator is deployed and
// after it runs (on the host) with a Ready Whisk, the front answers `nuv status` in every format
// with the full program's bytes, from the record the full program left of its render; every miss
// (no record, another operator/config or image choice, a corrupt record, a cluster that does not
// answer, flags it does not know) goes to the full program with nothing printed.
func TestIntegrationStatusSameAsFull(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	project := t.TempDir()
	for _, n := range []string{"go.mod", "go.sum", "operator", "tests"} {
		if err := os.Symlink(filepath.Join(repoRoot(t), n), filepath.Join(project, n)); err != nil {
			t.Fatal(err)
		}
	}
	c := localtest.Start(t, localtest.Options{Project: project})
	root := t.TempDir()
	f := &statusFixture{project: project, vars: map[string]string{"NUV_HOME": c.Home, "NUV_CACHE_DIR": filepath.Join(root, "cache"), kube.EnvCluster: c.Name}}
	ctx := context.Background()

	bin := t.TempDir()
	front := buildFront(t, bin)
	env := append(environ(EnvFull, "NUV_FRONT", "KUBECONFIG", "NUV_CLUSTER", "KUBE", "DETECT_FORCE", "NUV_STATE", "NUV_PROJECT", "NUV_HOME",
		"NUV_CACHE_DIR", "MY_OPERATOR_IMAGE", "TAG", "WHISK", "NUV_OPERATOR_DIR", "NUV_OPERATOR_MAIN"), EnvFull+"="+filepath.Join(bin, "missing"))
	for k, v := range f.vars {
		env = append(env, k+"="+v)
	}

	t.Run("no record yet", func(t *testing.T) {
		if out, ok := frontStatus(t, f); ok {
			t.Fatalf("the front answered before any render was recorded:\n%s", out)
		}
	})
	t.Run("operator not deployed", func(t *testing.T) {
		fullStatus(t, f) // renders, and records the render
		for _, args := range statusForms {
			out := sameAsFull(t, f, front, env, args...)
			if len(args) == 0 && (!strings.Contains(out, "operator: not deployed (deployment nuv-system/whisk-operator missing") || !strings.Contains(out, "whisks:   none")) {
				t.Errorf("want the operator missing and no Whisk:\n%s", out)
			}
		}
	})

	var out bytes.Buffer
	o := deploy.Options{Project: project, Home: c.Home, Timeout: 3 * time.Minute, Out: &out, Log: localtest.Logger(t), Getenv: f.getenv}
	if err := deploy.Operator(ctx, o); err != nil {
		t.Fatalf("nuv operator: %v\n%s", err, out.String())
	}
	if err := deploy.Instance(ctx, o); err != nil {
		t.Fatalf("nuv instance: %v\n%s", err, out.String())
	}

	t.Run("operator and a Whisk", func(t *testing.T) {
		for _, args := range append(statusForms, []string{"--kubeconfig", c.Kubeconfig, "-o", "wide"}) {
			out := sameAsFull(t, f, front, env, args...)
			if len(args) == 0 {
				for _, want := range []string{"operator: deployment nuv-system/whisk-operator Available", "host:     operator pid", "whisk:    default/whisk Ready=True (Ready)"} {
					if !strings.Contains(out, want) {
						t.Errorf("status lacks %q:\n%s", want, out)
					}
				}
			}
		}
	})

	t.Run("a copy of operator/config: same content, same record", func(t *testing.T) {
		dir := filepath.Join(root, "op")
		if err := os.CopyFS(filepath.Join(dir, "config"), os.DirFS(filepath.Join(repoRoot(t), "operator", "config"))); err != nil {
			t.Fatal(err)
		}
		f.vars["NUV_OPERATOR_DIR"] = dir
		defer delete(f.vars, "NUV_OPERATOR_DIR")
		if _, ok := frontStatus(t, f); !ok {
			t.Error("the front handed over for an unchanged copy of operator/config")
		}
	})

	key, err := rendercache.Key(rendercache.ConfigDir(project, f.getenv), project, c.Name, f.getenv)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		setup func(t *testing.T) (undo func())
	}{
		{"help", []string{"-h"}, nil},
		{"deprecated --json", []string{"--json"}, nil},
		{"--timeout", []string{"--timeout", "1m"}, nil},
		{"unknown flag", []string{"--all"}, nil},
		{"bad format", []string{"-o", "name"}, nil},
		{"an argument", []string{"x"}, nil},
		{"no record (another cache)", nil, func(t *testing.T) func() {
			f.vars["NUV_CACHE_DIR"] = t.TempDir()
			return func() { f.vars["NUV_CACHE_DIR"] = filepath.Join(root, "cache") }
		}},
		{"operator/config changed", nil, func(t *testing.T) func() {
			dir := filepath.Join(t.TempDir(), "op")
			if err := os.CopyFS(filepath.Join(dir, "config"), os.DirFS(filepath.Join(repoRoot(t), "operator", "config"))); err != nil {
				t.Fatal(err)
			}
			k := filepath.Join(dir, "config", "default", "kustomization.yaml")
			data, _ := os.ReadFile(k)
			if err := os.WriteFile(k, append(data, []byte("# edited\n")...), 0o644); err != nil {
				t.Fatal(err)
			}
			f.vars["NUV_OPERATOR_DIR"] = dir
			return func() { delete(f.vars, "NUV_OPERATOR_DIR") }
		}},
		{"another image (MY_OPERATOR_IMAGE)", nil, func(t *testing.T) func() {
			f.vars["MY_OPERATOR_IMAGE"] = "registry.example/me/op"
			return func() { delete(f.vars, "MY_OPERATOR_IMAGE") }
		}},
		{"another image (build-and-load)", nil, func(t *testing.T) func() {
			ref := rendercache.ImageRefFile(project, c.Name)
			writeFile(t, ref, "localhost:5001/whisk-operator:dev\n")
			return func() { _ = os.Remove(ref) }
		}},
		{"corrupt record", nil, func(t *testing.T) func() {
			p := filepath.Join(rendercache.Dir(f.getenv), key+".json")
			data, _ := os.ReadFile(p)
			writeFile(t, p, "{")
			return func() { writeFile(t, p, string(data)) }
		}},
		{"cluster does not answer", nil, func(t *testing.T) func() {
			// A cluster of clusters/ whose server is gone, of a known type, with a record of its render.
			data, err := os.ReadFile(c.Kubeconfig)
			if err != nil {
				t.Fatal(err)
			}
			srv := c.Config.Host
			dead := filepath.Join(project, "clusters", "gone.kubeconfig")
			writeFile(t, dead, strings.ReplaceAll(string(data), strings.TrimPrefix(srv, "https://"), "127.0.0.1:1"))
			writeFile(t, kube.OverridePath(project, "gone"), "local\n")
			k, err := rendercache.Key(rendercache.ConfigDir(project, f.getenv), project, "gone", f.getenv)
			if err != nil {
				t.Fatal(err)
			}
			deps, _ := rendercache.Load(rendercache.Dir(f.getenv), key)
			if err := rendercache.Save(rendercache.Dir(f.getenv), k, deps); err != nil {
				t.Fatal(err)
			}
			f.vars[kube.EnvCluster] = "gone"
			return func() { f.vars[kube.EnvCluster] = c.Name }
		}},
	} {
		t.Run("hand-over: "+tc.name, func(t *testing.T) {
			if tc.setup != nil {
				defer tc.setup(t)()
			}
			if out, ok := frontStatus(t, f, tc.args...); ok {
				t.Errorf("the front answered `nuv status %s`:\n%s\nwant it handed to the full program", strings.Join(tc.args, " "), out)
			}
		})
	}
	// Every miss undone, the front answers again.
	sameAsFull(t, f, "", nil)
}
