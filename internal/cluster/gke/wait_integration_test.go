package gke_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/clustertest"
	"github.com/nuv-dev/nuv/internal/cluster/gke"
	"github.com/nuv-dev/nuv/internal/emulator/gcp"
)

// hungControlPlane is the emulator's control-plane backend for a cloud that never finishes: its
// Ensure blocks until the request's context ends, so the emulator's create operation stays
// RUNNING.
type hungControlPlane struct{}

func (hungControlPlane) Ensure(ctx context.Context, _, _ string) (gcp.Endpoint, error) {
	<-ctx.Done()
	return gcp.Endpoint{}, ctx.Err()
}
func (hungControlPlane) SetNodeGroups(context.Context, string, []gcp.NodeGroup) error { return nil }
func (hungControlPlane) Delete(context.Context, string) error                         { return nil }

// TestIntegrationGKEWaitBound: an apply whose cluster operation never ends gives up at the wait
// bound (NUV_CLUSTER_WAIT_TIMEOUT), printing progress meanwhile, and its error names the
// operation, what it creates and its last status.
func TestIntegrationGKEWaitBound(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nuv against the GKE emulator; skipped under -short")
	}
	dir := t.TempDir()
	s, err := gcp.New(gcp.Options{Dir: dir, Clusters: hungControlPlane{}})
	if err != nil {
		t.Fatal(err)
	}
	addr := clustertest.Serve(t, func(ctx context.Context, ln net.Listener) error { return gcp.Serve(ctx, ln, s) })
	for i := 0; i < 100 && gcp.Ping(context.Background(), addr) != nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	project, _ := s.Project()
	home, proj := t.TempDir(), t.TempDir()
	env := []string{gke.EndpointEnv + "=http://" + addr + "/", "GOOGLE_APPLICATION_CREDENTIALS=" + filepath.Join(dir, gcp.CredentialsFileName),
		"NUV_HOME=" + home, "NUV_PROJECT=" + proj, "CLOUDSDK_CORE_PROJECT=" + project, "NUV_CLUSTER_WAIT_TIMEOUT=3s"}
	f := filepath.Join(proj, "hung.yaml")
	if err := os.WriteFile(f, []byte(gkeSpec("hung", project, "1.35", "  - {name: pool, count: 1}\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, errs, code := clustertest.Output(t, clustertest.Command(asNuv, env, "cluster", "apply", "-f", f))
	took := time.Since(t0)
	if code == 0 || code == -1 {
		t.Fatalf("apply of a cluster whose operation never ends: exit %d, want a failure\n%s", code, errs)
	}
	for _, want := range []string{"gave up waiting for GKE operation", "CREATE_CLUSTER of", "hung", "last seen: RUNNING", "NUV_CLUSTER_WAIT_TIMEOUT"} {
		if !strings.Contains(errs, want) {
			t.Errorf("the error does not say %q:\n%s", want, errs)
		}
	}
	if !strings.Contains(errs, "RUNNING, 0s elapsed") {
		t.Errorf("no progress printed while waiting:\n%s", errs)
	}
	if took > 60*time.Second {
		t.Errorf("the apply took %s with a 3s wait bound", took)
	}
}
