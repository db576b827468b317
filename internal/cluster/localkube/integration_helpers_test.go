package localkube_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/proc"
)

// kubectl runs the preinstalled kubectl against kubeconfig: these tests check that the cluster
// behaves as a real one for the stock client, so a missing kubectl fails them (it is never a pass).
func kubectl(t *testing.T, kubeconfig string, stdin string, args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl is required by the local-cluster integration tests and is not on PATH (install it, or run with -short): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// procsMentioning returns the pids of processes whose command line mentions s.
func procsMentioning(s string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), s) {
			continue
		}
		if st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); strings.Contains(string(st), ") Z") {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// eventually polls f until it returns nil or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: not after %s: %v", what, timeout, err)
}

func readPIDFile(t *testing.T, path string) int {
	t.Helper()
	r, err := proc.ReadRecord(path)
	if err != nil {
		t.Fatal(err)
	}
	return r.PID
}
