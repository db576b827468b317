package reap_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/local"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	"github.com/nuv-dev/nuv/internal/proc"
	"github.com/nuv-dev/nuv/internal/reap"
)

// TestMain lets the test binary play a test binary that holds a local cluster when it dies: with
// NUV_REAP_TEST_HOLD=1 it creates a cluster under $TMPDIR, as a test's t.TempDir would, prints
// "HELD" and waits to be killed.
func TestMain(m *testing.M) {
	if os.Getenv("NUV_REAP_TEST_HOLD") == "1" {
		if err := hold(); err != nil {
			fmt.Fprintln(os.Stderr, "hold:", err)
			os.Exit(1)
		}
		select {}
	}
	os.Exit(m.Run())
}

func hold() error {
	home, err := os.MkdirTemp("", "TestHold")
	if err != nil {
		return err
	}
	p := local.Provider{Home: filepath.Join(home, "home"), Project: filepath.Join(home, "project"), Log: cli.NewLogger(os.Stderr, 0), Getenv: os.Getenv}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := p.Create(ctx, localkube.CreateOptions{Name: "held"}); err != nil {
		return err
	}
	fmt.Println("HELD")
	return nil
}

// TestIntegrationStopsWhatAKilledTestBinaryLeft SIGKILLs a test binary holding a local cluster,
// shows that the cluster's processes outlive it, then runs the test command's end step (hack/reap
// on the run's TMPDIR, as hack/test.sh does) and requires it to stop every one and say how many.
func TestIntegrationStopsWhatAKilledTestBinaryLeft(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a local cluster; skipped under -short")
	}
	root := t.TempDir()
	t.Cleanup(func() { reap.Stop(context.Background(), root, time.Second) })

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "NUV_REAP_TEST_HOLD=1", "TMPDIR="+root)
	child.Stderr = testLog{t}
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	held := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "HELD" {
				held <- true
				return
			}
		}
		held <- false
	}()
	select {
	case ok := <-held:
		if !ok {
			child.Wait()
			t.Fatal("the test binary ended without creating its cluster (its log is above)")
		}
	case <-time.After(12 * time.Minute):
		child.Process.Kill()
		t.Fatal("the test binary did not create its cluster in 12 minutes")
	}

	before, err := reap.Find(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) < 4 {
		t.Fatalf("found %d recorded processes of the held cluster, want its control plane (etcd, apiserver, controller-manager, scheduler, ...): %v", len(before), before)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	time.Sleep(time.Second)
	for _, p := range before {
		if !p.Alive() {
			t.Fatalf("%s (pid %d) ended with the test binary; this test shows nothing", p.File, p.PID)
		}
	}

	// the test command's end step
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	end := exec.Command("go", "run", "./hack/reap", root)
	end.Dir = repo
	got, err := end.CombinedOutput()
	t.Logf("end step:\n%s", got)
	if err != nil {
		t.Fatalf("end step failed: %v", err)
	}
	m := regexp.MustCompile(`(?m)^stopped (\d+) processes left running under `).FindSubmatch(got)
	if m == nil {
		t.Fatal("the end step did not say how many processes it stopped")
	}
	if n, _ := strconv.Atoi(string(m[1])); n < len(before) {
		t.Errorf("end step stopped %d processes, want at least the %d found", n, len(before))
	}
	for _, p := range before {
		if p.Alive() {
			t.Errorf("%s (pid %d) still runs after the end step", p.File, p.PID)
		}
	}
	if left, _ := reap.Find(root); len(left) != 0 {
		t.Errorf("still running after the end step: %v", left)
	}
}

// TestFindSkipsWhatItMustNotSignal checks the records Find ignores: dead pids, records without a
// start time (a recycled pid could name anything), a pid whose start time differs, and files that
// are not records.
func TestFindSkipsWhatItMustNotSignal(t *testing.T) {
	root := t.TempDir()
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	_, start, err := proc.Stat(sleeper.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	pid := sleeper.Process.Pid
	files := map[string]string{
		"a/clusters/c/pids/etcd.pid":     fmt.Sprintf("%d %d\n", pid, start),
		"a/clusters/c/pids/nostart.pid":  fmt.Sprintf("%d\n", pid),
		"a/clusters/c/pids/recycled.pid": fmt.Sprintf("%d %d\n", pid, start+1),
		"a/clusters/c/pids/dead.pid":     "999999999 1\n",
		"a/clusters/c/pids/garbage.pid":  "not a pid\n",
		"b/registry/state.json":          fmt.Sprintf(`{"pid": %d, "start": %d, "addr": "127.0.0.1:1"}`, pid, start),
		"b/other/state.json":             `{"kind": "something else"}`,
		"b/clusters/c/logs/etcd.log":     "12345 1\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	found, err := reap.Find(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range found {
		got = append(got, strings.TrimPrefix(p.File, root+"/"))
	}
	want := []string{"a/clusters/c/pids/etcd.pid", "b/registry/state.json"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("found %v, want %v", got, want)
	}
	stopped, err := reap.Stop(context.Background(), root, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(stopped) != 1 || stopped[0].PID != pid {
		t.Errorf("stopped %v, want the sleeper (pid %d) once", stopped, pid)
	}
	if (proc.Record{PID: pid, Start: start}).Alive() {
		t.Error("the sleeper still runs")
	}
	if _, err := reap.Find(filepath.Join(root, "missing")); err == nil {
		t.Error("Find on a missing directory should fail")
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Logf("held binary: %s", strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
