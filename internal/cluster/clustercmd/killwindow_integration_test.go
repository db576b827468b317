package clustercmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/syncbuf"
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
	t.Cleanup(func() {
		if out, errs, code := c.run("delete", "--all", "--yes"); code != 0 {
			t.Errorf("clean up: delete --all: exit %d\n%s%s", code, out, errs)
		}
	})
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
		cmd := c.cmd("apply", "--yes", "-f", f)
		cmd.Env = append(cmd.Env, "NUV_FAILPOINT_KILL_BEFORE_RECORD=1")
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
			t.Fatalf("kill %d (%s): apply with the failpoint before the record: %v\n%s", kills, next, err, errs)
		}
		if n := countProcs(dir, "etcd"); n > 1 {
			t.Fatalf("kill %d (%s): %d etcd processes for the cluster", kills, next, n)
		}
	}
	if kills < 1 {
		t.Fatal("no apply was killed: the plan of a new cluster had no change")
	}
	if out, errs, code := c.run("apply", "--yes", "-f", f); code != 0 {
		t.Fatalf("apply after %d killed applies: exit %d\n%s%s", kills, code, out, errs)
	}
	entries, _ := os.ReadDir(filepath.Join(c.home, "clusters"))
	var clusters []string
	for _, e := range entries {
		if e.IsDir() {
			clusters = append(clusters, e.Name())
		}
	}
	if len(clusters) != 1 {
		t.Fatalf("clusters in NUV_HOME: %v, want only kw", clusters)
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

// TestIntegrationKindInterruptAndKillWindow: Ctrl-C (SIGINT to the nuv process) during
// `nuv cluster create kind` returns within seconds, and the next apply replaces what kind had
// made so far; an apply killed (kill -9) after kind's create returned and before the record says
// so leaves a cluster the next apply keeps: the same control-plane container, one of it.
func TestIntegrationKindInterruptAndKillWindow(t *testing.T) {
	rt := kindRuntime(t)
	c := cliRun{t: t, home: t.TempDir(), project: t.TempDir()}
	const name = "nuv-kill-window"
	t.Cleanup(func() {
		if out, errs, code := c.run("delete", name); code != 0 {
			t.Errorf("clean up: delete %s: exit %d\n%s%s", name, code, out, errs)
		}
	})
	node := name + "-control-plane"
	file := c.specFile(kindSpec(name, 0))
	containers := func() string {
		return rtOut(t, rt, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+name, "--format", "{{.Names}}")
	}

	// 1. Ctrl-C while kind makes the control plane.
	cmd := c.cmd("create", "kind", name)
	var errb syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &errb, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, cmd, &errb, "Starting control-plane", 5*time.Minute)
	t0 := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	took := time.Since(t0)
	if err == nil {
		t.Fatalf("an interrupted create succeeded:\n%s", errb.String())
	}
	if took > 15*time.Second {
		t.Fatalf("the interrupted create returned after %s, want within seconds:\n%s", took.Round(time.Second), errb.String())
	}
	t.Logf("interrupted create returned in %s", took.Round(100*time.Millisecond))
	if out, errs, code := c.run("apply", "--yes", "-f", file); code != 0 {
		t.Fatalf("apply after an interrupted create: exit %d\n%s%s", code, out, errs)
	}
	if got := containers(); got != node {
		t.Fatalf("containers after the resumed apply: %q, want only %s", got, node)
	}

	// 2. Killed after kind's create returned, before the record.
	if out, errs, code := c.run("delete", name); code != 0 {
		t.Fatalf("delete: exit %d\n%s%s", code, out, errs)
	}
	cmd = c.cmd("apply", "--yes", "-f", file)
	// kind's create records its intent ("creating") before calling kind: its second record is the
	// one that says what kind made.
	cmd.Env = append(cmd.Env, "NUV_FAILPOINT_KILL_BEFORE_RECORD=1.2")
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
		t.Fatalf("apply with the failpoint before the record: %v", err)
	}
	made := rtOut(t, rt, "inspect", "--format", "{{.Id}}", node)
	if out, errs, code := c.run("apply", "--yes", "-f", file); code != 0 {
		t.Fatalf("apply after a kill before the record: exit %d\n%s%s", code, out, errs)
	}
	if got := containers(); got != node {
		t.Fatalf("containers after the resumed apply: %q, want only %s", got, node)
	}
	if now := rtOut(t, rt, "inspect", "--format", "{{.Id}}", node); now != made {
		t.Fatalf("the cluster was made again: control-plane container %.12s -> %.12s", made, now)
	}
	if got := nodesOf(t, filepath.Join(c.project, "clusters", name+".kubeconfig")); len(got) != 1 {
		t.Fatalf("nodes: %v", got)
	}
}
