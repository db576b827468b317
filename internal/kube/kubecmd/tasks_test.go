package kubecmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/kube"
)

// The repository's tasks/kube.yml, included flattened by a root Taskfile as the lead's does:
// `task 2`, `task use N=...` and `task list` select and list through nuv, and later tasks get the
// selection as KUBECONFIG.
func TestTaskVerbs(t *testing.T) {
	w := newWorld(t)
	// Tasks run child processes (nuv through the link directory = this test binary) with the
	// process environment: keep them away from the real HOME.
	for _, k := range []string{"HOME", "NUV_HOME", "NUV_PROJECT"} {
		t.Setenv(k, w.vars[k])
	}
	t.Setenv(kube.EnvCluster, "")
	for _, n := range []string{"one", "three", "two"} {
		writeFile(t, filepath.Join(w.project, "clusters", n+".kubeconfig"), fmt.Sprintf(
			"apiVersion: v1\nkind: Config\ncurrent-context: %[1]s\ncontexts:\n- name: %[1]s\n  context: {cluster: %[1]s}\nclusters:\n- name: %[1]s\n  cluster: {server: \"https://127.0.0.1:1\"}\n", n))
	}
	writeFile(t, filepath.Join(w.project, "clusters", "two.type"), "gke\n")
	src, err := os.ReadFile("../../../tasks/kube.yml")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.project, "tasks", "kube.yml"), string(src))
	writeFile(t, filepath.Join(w.project, "Taskfile.yml"), `version: '3'
includes:
  kube:
    taskfile: ./tasks/kube.yml
    flatten: true
tasks:
  show:
    cmds:
      - echo "KUBECONFIG=$KUBECONFIG KUBE=$KUBE"
`)
	selected := func() string {
		c, err := kube.Selected(w.project, func(k string) string { return w.vars[k] })
		if err != nil {
			return err.Error()
		}
		return c.Name
	}
	steps := []struct {
		args     []string
		selected string
		out      string
	}{
		{[]string{"-task", "2"}, "three", "selected 2 three for this project"},
		{[]string{"-task", "use", "N=two"}, "two", "type gke"},
		{[]string{"-task", "show"}, "two", "KUBECONFIG=" + filepath.Join(w.project, "clusters", "two.kubeconfig") + " KUBE=gke"},
		{[]string{"-task", "1"}, "one", "unreachable: connection refused"},
		{[]string{"-task", "list"}, "one", "*  1  one"},
		{[]string{"-task", "use"}, "one", "3  two    gke"},
	}
	for _, s := range steps {
		out, errOut, code := w.nuv(s.args...)
		if code != 0 || !strings.Contains(out+errOut, s.out) {
			t.Errorf("nuv %v: exit %d, want %q in\n%s%s", s.args, code, s.out, out, errOut)
		}
		if got := selected(); got != s.selected {
			t.Errorf("after nuv %v: selected %q, want %q", s.args, got, s.selected)
		}
	}
	// Out of range through the task: non-zero, selection unchanged.
	if _, _, code := w.nuv("-task", "9"); code == 0 {
		t.Error("task 9 with three clusters succeeded")
	}
	if got := selected(); got != "one" {
		t.Errorf("after task 9: selected %q", got)
	}
}
