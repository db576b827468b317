package aks_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/clustertest"
	"github.com/nuv-dev/nuv/internal/emulator/azure"
)

// hungControlPlane is the emulator's control-plane backend for a cloud that never finishes: its
// Ensure blocks until the request's context ends, so the managed cluster stays Creating.
type hungControlPlane struct{}

func (hungControlPlane) Ensure(ctx context.Context, _ azure.ClusterSpec) error {
	<-ctx.Done()
	return ctx.Err()
}
func (hungControlPlane) Kubeconfig(string, string, string) ([]byte, error) {
	return nil, os.ErrNotExist
}
func (hungControlPlane) Delete(context.Context, string) error { return nil }

// TestIntegrationAKSWaitBound: an apply whose managed cluster never leaves Creating gives up at
// the wait bound (NUV_CLUSTER_WAIT_TIMEOUT), printing progress meanwhile, and its error names the
// operation, the cluster and its last status.
func TestIntegrationAKSWaitBound(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nuv against the Azure emulator; skipped under -short")
	}
	dir := t.TempDir()
	s, err := azure.New(azure.Options{Dir: dir, Backend: hungControlPlane{}})
	if err != nil {
		t.Fatal(err)
	}
	addr := clustertest.Serve(t, func(ctx context.Context, ln net.Listener) error { return azure.Serve(ctx, ln, s) })
	home, project := t.TempDir(), t.TempDir()
	env := append(azure.Env(azure.Process{Addr: addr, Dir: dir}, s.Credentials()),
		"NUV_HOME="+home, "NUV_PROJECT="+project, "NUV_CLUSTER_WAIT_TIMEOUT=3s")
	f := filepath.Join(project, "az1.yaml")
	if err := os.WriteFile(f, []byte(aksSpec(1, "1.36", "Standard_D2s_v3")), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, errs, code := clustertest.Output(t, clustertest.Command(asNuv, env, "cluster", "apply", "-f", f))
	if code == 0 || code == -1 {
		t.Fatalf("apply of a cluster that never finishes: exit %d, want a failure\n%s", code, errs)
	}
	for _, want := range []string{"gave up waiting for", "az1", "NUV_CLUSTER_WAIT_TIMEOUT", "last seen:"} {
		if !strings.Contains(errs, want) {
			t.Errorf("the error does not say %q:\n%s", want, errs)
		}
	}
	if !strings.Contains(errs, "aks: managed cluster az1") {
		t.Errorf("no progress printed while waiting:\n%s", errs)
	}
	if took := time.Since(t0); took > 60*time.Second {
		t.Errorf("the apply took %s with a 3s wait bound", took)
	}
}
