package kubecmd_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/kube"
)

// kubeTaskfile writes the repository's tasks/kube.yml into w's project, included flattened by a
// root Taskfile as the repository's own Taskfile.yml does.
func kubeTaskfile(t *testing.T, w *world) {
	t.Helper()
	src, err := os.ReadFile("../../../tasks/kube.yml")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.project, "tasks", "kube.yml"), string(src))
	writeFile(t, filepath.Join(w.project, "Taskfile.yml"), "version: '3'\nincludes:\n  kube:\n    taskfile: ./tasks/kube.yml\n    flatten: true\n")
	for _, k := range []string{"HOME", "NUV_HOME", "NUV_PROJECT"} {
		t.Setenv(k, w.vars[k])
	}
	t.Setenv(kube.EnvCluster, "")
	t.Setenv(kube.EnvKubeconfig, "")
}

// TestTaskAnyNumber: `task N` works for every number the list shows, 10 and 12 included (go-task
// wildcard tasks in tasks/kube.yml), and a number beyond the list says so instead of go-task's
// "task not found" (exit 200).
func TestTaskAnyNumber(t *testing.T) {
	w := newWorld(t)
	kubeTaskfile(t, w)
	for i := 1; i <= 12; i++ {
		n := fmt.Sprintf("c%02d", i)
		writeFile(t, filepath.Join(w.project, "clusters", n+".kubeconfig"), fmt.Sprintf(
			"apiVersion: v1\nkind: Config\ncurrent-context: %[1]s\ncontexts:\n- name: %[1]s\n  context: {cluster: %[1]s}\nclusters:\n- name: %[1]s\n  cluster: {server: \"https://127.0.0.1:1\"}\n", n))
	}
	for _, n := range []string{"12", "1", "10", "9"} {
		out, errOut, code := w.nuv("-task", n)
		want := fmt.Sprintf("selected %s c%02s for this project", n, n)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("task %s: exit %d, want %q in\n%s%s", n, code, want, out, errOut)
		}
		c, err := kube.Selected(w.project, func(k string) string { return w.vars[k] })
		if err != nil || c.Name != fmt.Sprintf("c%02s", n) {
			t.Errorf("after task %s: selected %q (%v)", n, c.Name, err)
		}
	}
	out, errOut, code := w.nuv("-task", "13")
	if code == 0 || code == 200 || !strings.Contains(out+errOut, "no cluster number 13: valid numbers are 1..12") {
		t.Errorf("task 13: exit %d\n%s%s", code, out, errOut)
	}
}

// TestIntegrationKubectlFollowsTaskN: what a user types once (`eval "$(nuv kube env)"`) makes the
// real kubectl follow `task N` in the same project, without touching ~/.kube/config (newWorld
// checks it is unchanged); adding a kubeconfig that sorts first does not renumber; `nuv status`
// says which source chose the cluster, and an explicit KUBECONFIG wins unless NUV_CLUSTER is set.
func TestIntegrationKubectlFollowsTaskN(t *testing.T) {
	if testing.Short() {
		t.Skip("real local clusters and kubectl; skipped under -short")
	}
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		if _, err := os.Stat("/usr/bin/kubectl"); err != nil {
			t.Fatal("no kubectl to test with (PATH, /usr/bin/kubectl)")
		}
		kubectl = "/usr/bin/kubectl"
	}
	w := newWorld(t)
	clusters := w.start("", "eks")
	kubeTaskfile(t, w)
	list, errOut, code := w.nuv("kube", "list", "--offline")
	if code != 0 {
		t.Fatalf("list: exit %d\n%s", code, errOut)
	}
	byNumber := map[string]string{} // "1" -> cluster name
	for name, row := range tableRows(list) {
		byNumber[row[0]] = name
	}
	// A kubeconfig added later that sorts first keeps the numbers.
	writeFile(t, filepath.Join(w.project, "clusters", "aaa-broken.kubeconfig"), "apiVersion: v1\nclusters: [\n")
	list, _, _ = w.nuv("kube", "list", "--offline")
	for n, name := range byNumber {
		if row := tableRows(list)[name]; row == nil || row[0] != n {
			t.Errorf("%s moved from %s after adding aaa-broken.kubeconfig:\n%s", name, n, list)
		}
	}
	if row := tableRows(list)["aaa-broken"]; row == nil || row[0] != "3" {
		t.Errorf("aaa-broken is not number 3:\n%s", list)
	}

	// What the user types once.
	line, errOut, code := w.nuv("kube", "env")
	link := kube.ProjectKubeconfig(w.project)
	if code != 0 || strings.TrimSpace(line) != "export KUBECONFIG='"+link+"'" {
		t.Fatalf("nuv kube env: exit %d, %q %s", code, line, errOut)
	}
	shellEnv := []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "KUBECONFIG=" + link}
	kubectlRun := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		cmd := exec.Command(kubectl, args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = w.project, shellEnv, &out, &errb
		err := cmd.Run()
		if err != nil {
			return out.String(), fmt.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, errb.String())
		}
		return out.String(), nil
	}
	for _, n := range []string{"2", "1"} {
		name := byNumber[n]
		if out, errOut, code := w.nuv("-task", n); code != 0 {
			t.Fatalf("task %s: exit %d\n%s%s", n, code, out, errOut)
		}
		var c *struct{ host string }
		for _, lc := range clusters {
			if lc.Name == name {
				c = &struct{ host string }{lc.Config.Host}
			}
		}
		server, err := kubectlRun("config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}")
		if err != nil || c == nil || server != c.host {
			t.Errorf("after task %s: kubectl's server %q (%v), want %s's", n, server, err, name)
		}
		if out, err := kubectlRun("get", "nodes", "-o", "name"); err != nil || !strings.HasPrefix(out, "node/") {
			t.Errorf("after task %s: kubectl get nodes: %q %v", n, out, err)
		}
		if out, err := kubectlRun("get", "namespace", "kube-system", "-o", "name"); err != nil || strings.TrimSpace(out) != "namespace/kube-system" {
			t.Errorf("after task %s: kubectl get namespace: %q %v", n, out, err)
		}
	}

	// Which source nuv's own commands use, as `nuv status` reports it (it builds the operator's
	// manifests from the project's operator/: the repository's).
	repoOperator, err := filepath.Abs("../../../operator")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(repoOperator, filepath.Join(w.project, "operator")); err != nil {
		t.Fatal(err)
	}
	sel, other := byNumber["1"], byNumber["2"]
	otherPath := filepath.Join(w.project, "clusters", other+".kubeconfig")
	for _, tc := range []struct {
		label   string
		env     map[string]string
		cluster string
		from    string
	}{
		{"the project's link in KUBECONFIG is the selection", map[string]string{"KUBECONFIG": link}, sel, "from:     the project's selection (" + kube.CurrentPath(w.project) + ")"},
		{"no KUBECONFIG: the selection", nil, sel, "from:     the project's selection"},
		{"an explicit KUBECONFIG wins", map[string]string{"KUBECONFIG": otherPath}, other, "from:     KUBECONFIG=" + otherPath + " (wins over the project's selection, as for kubectl)"},
		{"NUV_CLUSTER wins over KUBECONFIG", map[string]string{"KUBECONFIG": otherPath, kube.EnvCluster: sel}, sel, "from:     NUV_CLUSTER=" + sel + " (this shell's selection)"},
	} {
		saved := map[string]string{}
		for k, v := range tc.env {
			saved[k] = w.vars[k]
			w.vars[k] = v
		}
		out, errOut, code := w.nuv("status")
		for k := range tc.env {
			w.vars[k] = saved[k]
		}
		if code != 0 || !strings.Contains(out, "cluster:  "+tc.cluster+" ") || !strings.Contains(out, tc.from) {
			t.Errorf("%s: nuv status exit %d, want cluster %s and %q in\n%s%s", tc.label, code, tc.cluster, tc.from, out, errOut)
		}
	}
	// The user's own ~/.kube/config was not used: its only context is still "mine" (newWorld's
	// cleanup checks the file byte for byte).
}
