package clustercmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/servertest"
)

// TestMain lets the test binary act as `nuv cluster` (NUV_CLUSTERCMD_MAIN=1), so the CLI runs as
// its own process with the same signal handling as nuv's main: Ctrl-C cancels the context.
func TestMain(m *testing.M) {
	if os.Getenv("NUV_CLUSTERCMD_MAIN") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		streams := cli.OSStreams()
		wd, _ := os.Getwd()
		env := &cli.Env{Streams: streams, Log: cli.NewLogger(streams.Err, 0), Getenv: os.Getenv, Dir: wd}
		err := Run(ctx, env, os.Args[1:])
		stop()
		if err != nil {
			var ee *cli.ExitError
			if !(errors.As(err, &ee) && ee.Err == nil) {
				os.Stderr.WriteString("nuv: " + err.Error() + "\n")
			}
		}
		os.Exit(cli.ExitCode(err))
	}
	os.Exit(servertest.Main(m)) // stops the S3 server a test started (servertest.S3)
}

type cliRun struct {
	t             *testing.T
	home, project string
}

func (c cliRun) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "NUV_CLUSTERCMD_MAIN=1", "NUV_HOME="+c.home, "NUV_PROJECT="+c.project)
	return cmd
}

// run runs `nuv cluster ARGS` and returns stdout, stderr and the exit code.
func (c cliRun) run(args ...string) (string, string, int) {
	c.t.Helper()
	cmd := c.cmd(args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestIntegrationCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("needs local clusters; skipped under -short")
	}
	c := cliRun{t: t, home: t.TempDir(), project: t.TempDir()}
	t.Cleanup(func() { c.run("delete", "--all", "--yes") })

	out, errs, code := c.run("prepare")
	if code != 0 || !regexpMatch(`^nuv-kube v1\.36\.3\t/\S+/nuv-kube\n$`, out) {
		t.Fatalf("prepare: exit %d %q\n%s", code, out, errs)
	}
	out, errs, code = c.run("create", "local", "cli", "--nodes", "2", "--flavor", "k3s")
	if code != 0 {
		t.Fatalf("create: exit %d\n%s", code, errs)
	}
	kubeconfig := filepath.Join(c.project, "clusters", "cli.kubeconfig")
	if strings.TrimSpace(out) != "cli\t"+kubeconfig {
		t.Fatalf("create output %q", out)
	}
	if !strings.Contains(errs, "cluster cli ready in") {
		t.Errorf("create progress missing:\n%s", errs)
	}
	out, _, code = c.run("list")
	if code != 0 || !regexpMatch(`(?m)^cli\s+local\s+running\s+https://127\.0\.0\.1:\d+\s+2/2\s+\d+s$`, out) {
		t.Fatalf("list (exit %d):\n%s", code, out)
	}
	_, errs, code = c.run("create", "local", "--name", "cli")
	if code != 1 || !strings.Contains(errs, "cluster already exists") {
		t.Fatalf("second create: exit %d\n%s", code, errs)
	}
	out, _, code = c.run("logs", "cli", "kube-apiserver", "--tail", "3")
	if code != 0 || strings.Count(out, "\n") != 3 {
		t.Fatalf("logs (exit %d):\n%s", code, out)
	}
	if _, errs, code = c.run("logs", "cli", "kubelet"); code != 2 || !strings.Contains(errs, "valid: etcd, kube-apiserver") {
		t.Fatalf("logs of an unknown component: exit %d\n%s", code, errs)
	}
	if out, _, code = c.run("kubeconfig", "cli"); code != 0 || strings.TrimSpace(out) != kubeconfig {
		t.Fatalf("kubeconfig: %d %q", code, out)
	}
	if out, _, code = c.run("stop", "cli"); code != 0 {
		t.Fatalf("stop: %d", code)
	}
	if out, _, code = c.run("status", "cli"); code != 3 || !strings.Contains(out, "stopped") {
		t.Fatalf("status of a stopped cluster: exit %d\n%s", code, out)
	}
	if _, errs, code = c.run("start", "cli"); code != 0 {
		t.Fatalf("start: exit %d\n%s", code, errs)
	}
	if out, _, code = c.run("status", "cli"); code != 0 || !strings.Contains(out, "running") {
		t.Fatalf("status after start: exit %d\n%s", code, out)
	}
	if out, _, code = c.run("delete", "cli"); code != 0 || out != "cli deleted\n" {
		t.Fatalf("delete: exit %d %q", code, out)
	}
	if _, err := os.Stat(kubeconfig); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("kubeconfig remains: %v", err)
	}
	if out, _, _ = c.run("list"); !strings.Contains(out, "no clusters") {
		t.Fatalf("list after delete:\n%s", out)
	}
}

// TestIntegrationCtrlC interrupts `nuv cluster create` with SIGINT while its components start: the
// command exits 130 and leaves no process, state or kubeconfig.
func TestIntegrationCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("needs local clusters; skipped under -short")
	}
	c := cliRun{t: t, home: t.TempDir(), project: t.TempDir()}
	dir := filepath.Join(c.home, "clusters", "intr")
	cmd := c.cmd("create", "local", "intr")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForAPIServerPID(t, cmd, dir, &errb)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("create after Ctrl-C: %v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("no interruption message:\n%s", errb.String())
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("state directory remains: %v", err)
	}
	if left := procsMentioning(dir); len(left) > 0 {
		t.Fatalf("processes remain: %v", left)
	}
}

// waitForAPIServerPID waits until the running `create` (cmd) has recorded the apiserver of the
// cluster state dir; past 5 minutes it kills cmd and fails the test with its stderr (when captured).
func waitForAPIServerPID(t *testing.T, cmd *exec.Cmd, dir string, stderr *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(dir, "pids", "kube-apiserver.pid")); err == nil {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			if stderr != nil {
				t.Fatalf("create never started the apiserver:\n%s", stderr.String())
			}
			t.Fatal("create never started the apiserver")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func procsMentioning(s string) []string {
	var left []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(s)) {
			continue
		}
		if st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); bytes.Contains(st, []byte(") Z")) {
			continue
		}
		left = append(left, e.Name())
	}
	return left
}

// TestIntegrationKilledCreate kills `nuv cluster create` (SIGKILL: no cleanup can run) once the
// apiserver runs: list shows the cluster as creating, start finishes it, delete removes it all.
func TestIntegrationKilledCreate(t *testing.T) {
	if testing.Short() {
		t.Skip("needs local clusters; skipped under -short")
	}
	c := cliRun{t: t, home: t.TempDir(), project: t.TempDir()}
	t.Cleanup(func() { c.run("delete", "--all", "--yes") })
	dir := filepath.Join(c.home, "clusters", "killed")
	cmd := c.cmd("create", "local", "killed", "--nodes", "2")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForAPIServerPID(t, cmd, dir, nil)
	cmd.Process.Kill()
	cmd.Wait()
	if out, _, _ := c.run("list"); !regexpMatch(`(?m)^killed\s+local\s+(creating|degraded)\s`, out) {
		t.Fatalf("list after a killed create:\n%s", out)
	}
	if _, errs, code := c.run("start", "killed"); code != 0 {
		t.Fatalf("start: exit %d\n%s", code, errs)
	}
	if out, _, _ := c.run("list"); !regexpMatch(`(?m)^killed\s+local\s+running( \[\w+\])?\s+\S+\s+2/2\s`, out) {
		t.Fatalf("list after start:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(c.project, "clusters", "killed.kubeconfig")); err != nil {
		t.Fatalf("kubeconfig not written by start: %v", err)
	}
	if _, errs, code := c.run("delete", "killed"); code != 0 {
		t.Fatalf("delete: exit %d\n%s", code, errs)
	}
	if left := procsMentioning(dir); len(left) > 0 {
		t.Fatalf("processes remain: %v", left)
	}
}
