package clustercmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestIntegrationLocalKilledBeforeRecord kills nuv (kill -9) in the window between a step's
// process call returning and its record, for every step of a local cluster's create: each apply
// carries out the first change left and dies before recording it. The next apply must find what
// was made (the cluster's state directory and processes by name, node groups by their nodes) and
// make nothing twice: one cluster, one etcd, one kube-apiserver, the spec's nodes.
func TestIntegrationLocalKilledBeforeRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("needs local clusters; skipped under -short")
	}
	c := cliRun{t: t, home: t.TempDir(), project: t.TempDir()}
	t.Cleanup(func() { c.run("delete", "--all") })
	f := c.specFile(lifecycleSpec("kw", 2, true, "web"))
	dir := filepath.Join(c.home, "clusters", "kw")
	change := regexp.MustCompile(`(?m)^\s*(\+|~|-/\+|-) [a-z]+ \S+`)
	kills := 0
	for ; kills < 10; kills++ {
		plan, errs, _ := c.run("plan", "-f", f)
		next := change.FindString(plan)
		if next == "" {
			break
		}
		cmd := c.cmd("apply", "-f", f)
		cmd.Env = append(cmd.Env, "NUV_FAILPOINT_KILL_BEFORE_RECORD=1")
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
			t.Fatalf("kill %d (%s): apply with the failpoint before the record: %v\n%s", kills, next, err, errs)
		}
		if n := countProcs(dir, "etcd"); n > 1 {
			t.Fatalf("kill %d (%s): %d etcd processes for the cluster", kills, next, n)
		}
	}
	if kills < 2 {
		t.Fatalf("only %d applies were killed; the spec has a control plane and node groups", kills)
	}
	if out, errs, code := c.run("apply", "-f", f); code != 0 {
		t.Fatalf("apply after %d killed applies: exit %d\n%s%s", kills, code, out, errs)
	}
	entries, _ := os.ReadDir(filepath.Join(c.home, "clusters"))
	if len(entries) != 1 {
		t.Fatalf("%d clusters in NUV_HOME, want 1", len(entries))
	}
	for _, comp := range []string{"etcd", "kube-apiserver"} {
		if n := countProcs(dir, comp); n != 1 {
			t.Errorf("%d %s processes for the cluster, want 1", n, comp)
		}
	}
	kubeconfig := filepath.Join(c.project, "clusters", "kw.kubeconfig")
	if got := strings.Join(nodesOf(t, kubeconfig), " "); got != "kw-batch-1:batch::batch kw-web-1:web:web kw-web-2:web:web" {
		t.Fatalf("nodes after %d killed applies: %s", kills, got)
	}
	t.Logf("%d applies killed before their record", kills)
}

// countProcs counts the live processes whose command line mentions dir and runs component (as
// its program or as an argument: the companion is "nuv-kube etcd ...").
func countProcs(dir, component string) int {
	n := 0
	for _, pid := range procsMentioning(dir) {
		b, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if err != nil {
			continue
		}
		for _, arg := range strings.Split(string(b), "\x00") {
			if arg == component || filepath.Base(arg) == component {
				n++
				break
			}
		}
	}
	return n
}
