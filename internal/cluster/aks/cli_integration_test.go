package aks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/clustertest"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/servertest"
	"github.com/nuv-dev/nuv/internal/emulator/azure"
)

// asNuv makes the test binary act as nuv, so a test can kill `nuv cluster apply` with SIGKILL in
// the middle of an apply (NUV_FAILPOINT_KILL_AFTER_STEP).
const asNuv = "NUV_AKS_TEST_AS_NUV"

// TestMain: the binary acts as nuv when asked, else runs the tests and stops the S3 server one
// started (servertest.S3).
func TestMain(m *testing.M) {
	if os.Getenv(asNuv) == "1" {
		clustertest.ActAsNuv(m, asNuv)
	}
	os.Exit(servertest.Main(m))
}

// TestIntegrationKilledCreate kills `nuv cluster apply` with SIGKILL right after the managed
// cluster is recorded (step 2); the next apply finishes the create without making anything twice.
//
// It runs twice: killed after step 2 was recorded, and killed in the window that matters, after
// the managed cluster's create returned and before the record says so (the next apply must find
// the cluster by name).
func TestIntegrationKilledCreate(t *testing.T) {
	for _, failpoint := range []string{"NUV_FAILPOINT_KILL_AFTER_STEP=2", "NUV_FAILPOINT_KILL_BEFORE_RECORD=2"} {
		t.Run(failpoint, func(t *testing.T) { killedCreate(t, failpoint) })
	}
}

func killedCreate(t *testing.T, failpoint string) {
	env, srv, _ := azureEnv(t)
	home, project := t.TempDir(), t.TempDir()
	vars := []string{"NUV_HOME=" + home, "NUV_PROJECT=" + project}
	for k, v := range env {
		vars = append(vars, k+"="+v)
	}
	run := func(extra []string, args ...string) (string, string, int) {
		t.Helper()
		return clustertest.Output(t, clustertest.Command(asNuv, append(vars, extra...), append([]string{"cluster"}, args...)...))
	}
	f := filepath.Join(project, "clusters", "specs", "aks.yaml")
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte(strings.ReplaceAll(aksSpec(1, "1.36", "Standard_D2s_v3"), "az1", "az2")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := run(nil, "plan", "-f", f, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "+ create managed-cluster/az2") {
		t.Fatalf("plan: exit %d\n%s%s", code, out, errs)
	}
	_, errs, code = run([]string{failpoint}, "apply", "--yes", "-f", f)
	if code != -1 {
		t.Fatalf("apply with the failpoint %s: exit %d (want killed)\n%s", failpoint, code, errs)
	}
	out, errs, code = run(nil, "plan", "-f", f)
	// Killed after step 2 was recorded, the cluster is as recorded; killed before its record, it
	// is found by name (at most its state is updated): never created again.
	mention := "managed-cluster/az2"
	if strings.Contains(failpoint, "BEFORE_RECORD") {
		mention = "create managed-cluster/az2"
	}
	if code != 0 || strings.Contains(out, mention) || !strings.Contains(out, "+ create agent-pool/user") {
		t.Fatalf("plan after the kill: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = run(nil, "apply", "--yes", "-f", f)
	if code != 0 {
		t.Fatalf("apply after the kill: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "taking it over") {
		t.Errorf("the lock of the killed nuv was not reported as taken over:\n%s", errs)
	}
	// One group and one cluster of that name in the emulator: nothing was made twice.
	st, err := os.ReadFile(filepath.Join(caDir(env), "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(st), `"name": "az2"`); n != 1 {
		t.Errorf("the emulator holds %d managed clusters az2, want 1", n)
	}
	if got := strings.Join(nodes(t, filepath.Join(project, "clusters", "az2.kubeconfig")), " "); got != "system:Standard_D2s_v3: user:Standard_D2s_v3:app" {
		t.Fatalf("nodes: %s", got)
	}
	out, errs, code = run(nil, "plan", "-f", f, "--detailed-exitcode")
	if code != 0 {
		t.Fatalf("plan after the resumed apply: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = run(nil, "delete", "--yes", "az2")
	if code != 0 {
		t.Fatalf("delete: exit %d\n%s%s", code, out, errs)
	}
	if names, _ := azure.NewLocalBackend(caDir(env), nil).Provider.Names(); len(names) > 0 {
		t.Errorf("control planes left behind the deleted cluster: %v", names)
	}
	_ = srv
}
