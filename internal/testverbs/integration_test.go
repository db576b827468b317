package testverbs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"k8s.io/client-go/dynamic"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/report"
)

// project makes a project that deploys the repository's operator: go.mod copied, operator/ and
// every file under tests/ (instance files and itest suites) linked.
func project(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	p := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p, f), data, 0o644)
	}
	os.Symlink(filepath.Join(root, "operator"), filepath.Join(p, "operator"))
	tests := filepath.Join(root, "tests")
	filepath.WalkDir(tests, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(tests, path)
		return linkFile(path, filepath.Join(p, "tests", rel))
	})
	return p
}

func clusterEnv(c *localtest.Cluster, out *bytes.Buffer, extra map[string]string) *cli.Env {
	m := map[string]string{"NUV_PROJECT": c.Project, "NUV_HOME": c.Home, "NUV_CLUSTER": c.Name,
		"HOME": os.Getenv("HOME"), "PATH": os.Getenv("PATH")}
	for k, v := range extra {
		m[k] = v
	}
	return &cli.Env{Streams: cli.Streams{Out: out, Err: out}, Log: cli.Quiet(), Dir: c.Project, Getenv: mapEnv(m)}
}

// TestIntegrationVerbs runs `nuv test` (clean, operator, the repository's itest suites, dtest) and
// a failing dtest on a real local cluster.
func TestIntegrationVerbs(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	p := project(t)
	c := localtest.Start(t, localtest.Options{Project: p})
	ctx := context.Background()
	dyn := dynamic.NewForConfigOrDie(c.Config)

	t.Run("test passes: clean, operator, itest, dtest", func(t *testing.T) {
		var out bytes.Buffer
		result := filepath.Join(t.TempDir(), "result.json")
		err := runTest(ctx, clusterEnv(c, &out, map[string]string{report.EnvResult: result}), []string{"--skip-utest", "--timeout", "2m"})
		t.Log(out.String())
		if err != nil {
			t.Fatalf("nuv test: %v", err)
		}
		res, _ := report.ReadChildResult(result)
		var names []string
		for _, s := range res.Steps {
			names = append(names, s.Name)
		}
		for _, want := range []string{"clean", "operator", "itest/whisk-redis", "itest/whisk-static-off", "itest/whisk-validation", "dtest/no-leaks"} {
			if !strings.Contains(strings.Join(names, " "), want) {
				t.Errorf("step %s not reported: %v", want, names)
			}
		}
		left, err := inventory(ctx, dyn)
		if err != nil || len(left) != 0 {
			t.Errorf("left after the test: %v %v", left, err)
		}
	})

	t.Run("dtest fails truthfully and still tears down", func(t *testing.T) {
		var out bytes.Buffer
		result := filepath.Join(t.TempDir(), "result.json")
		err := runDtest(ctx, clusterEnv(c, &out, map[string]string{"WHISK": "no-such-instance", report.EnvResult: result}), []string{"--timeout", "1m"})
		t.Log(out.String())
		if err == nil || cli.ExitCode(err) == 0 {
			t.Fatal("dtest with a missing instance file passed")
		}
		res, _ := report.ReadChildResult(result)
		if res.FailingStep != "instance" {
			t.Errorf("failing step %q, want instance", res.FailingStep)
		}
		if err := noLeaks(ctx, dyn, nil); err != nil {
			t.Errorf("after the failure: %v", err)
		}
	})
}

// linkFile links a file of the repository's tests/ into the test project.
func linkFile(src, dst string) error {
	os.MkdirAll(filepath.Dir(dst), 0o755)
	return os.Symlink(src, dst)
}
