package kubecmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nuv-dev/nuv/internal/app"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/kube"
)

// TestMain lets this test binary act as nuv, so tests run real nuv processes without building
// the binary: with NUV_TEST_AS_NUV=1, or when started under another name than *.test (the links
// "nuv", "task", ... that tasks run through point at env.Exe, which is this binary in tests).
func TestMain(m *testing.M) {
	if os.Getenv("NUV_TEST_AS_NUV") == "1" {
		os.Exit(app.Main(context.Background(), append([]string{"nuv"}, os.Args[1:]...)))
	}
	if !strings.HasSuffix(filepath.Base(os.Args[0]), ".test") {
		os.Exit(app.Main(context.Background(), os.Args))
	}
	os.Exit(localtest.Main(m)) // deletes the clusters the tests shared
}

// Two `nuv kube use` processes started at the same moment, many times over: the selection is
// always a complete file naming one of the two clusters, never half-written.
func TestConcurrentUseProcesses(t *testing.T) {
	w := newWorld(t)
	for _, n := range []string{"one", "two", "three"} {
		writeFile(t, filepath.Join(w.project, "clusters", n+".kubeconfig"), fmt.Sprintf(
			"apiVersion: v1\nkind: Config\ncurrent-context: %[1]s\ncontexts:\n- name: %[1]s\n  context: {cluster: %[1]s}\nclusters:\n- name: %[1]s\n  cluster: {server: \"https://127.0.0.1:1\"}\n", n))
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"NUV_TEST_AS_NUV=1", "PATH=" + os.Getenv("PATH")}
	for k, v := range w.vars {
		env = append(env, k+"="+v)
	}
	stop := make(chan struct{})
	bad := make(chan string, 1)
	go func() {
		defer close(bad)
		for {
			select {
			case <-stop:
				return
			default:
			}
			data, err := os.ReadFile(kube.CurrentPath(w.project))
			if err != nil {
				continue
			}
			var s kube.Selection
			if json.Unmarshal(data, &s) != nil || (s.Name != "one" && s.Name != "three") {
				bad <- string(data)
				return
			}
		}
	}()
	for round := 0; round < 8; round++ {
		var wg sync.WaitGroup
		for _, ref := range []string{"one", "2"} { // 2 is "three" (one, three, two)
			wg.Add(1)
			go func(ref string) {
				defer wg.Done()
				cmd := exec.Command(exe, "kube", "use", ref, "--offline")
				cmd.Env, cmd.Dir = env, w.project
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("nuv kube use %s: %v\n%s", ref, err, out)
				}
			}(ref)
		}
		wg.Wait()
	}
	close(stop)
	if data, ok := <-bad; ok {
		t.Fatalf("a reader saw an invalid selection: %q", data)
	}
	c, err := kube.Selected(w.project, func(k string) string { return w.vars[k] })
	if err != nil || (c.Name != "one" && c.Name != "three") {
		t.Fatalf("final selection %+v %v", c, err)
	}
}
