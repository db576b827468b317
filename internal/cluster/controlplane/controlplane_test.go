package controlplane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/paths"
)

// TestManagerWithoutAControlPlane: what the API says of a name that has no control plane (the
// emulators delete what may be gone), and where it would keep one.
func TestManagerWithoutAControlPlane(t *testing.T) {
	home := t.TempDir()
	m := Manager{Home: home}
	ctx := context.Background()
	if err := m.Delete(ctx, "gone"); err != nil {
		t.Fatalf("delete of a missing control plane: %v", err)
	}
	if _, err := m.Status(ctx, "gone"); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("status of a missing control plane: %v", err)
	}
	if err := m.Stop(ctx, "gone"); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("stop of a missing control plane: %v", err)
	}
	if _, err := m.CA("gone"); err == nil || !strings.Contains(err.Error(), "CA of control plane gone") {
		t.Fatalf("CA of a missing control plane: %v", err)
	}
	if err := m.Register("gone", "operator", os.Getpid()); err == nil {
		t.Fatal("a process registered with a missing control plane")
	}
	for _, tc := range []struct{ got, want string }{
		{m.Dir("c"), filepath.Join(home, "clusters", "c")},
		{m.Kubeconfig("c"), filepath.Join(home, "clusters", "c.kubeconfig")},
		{Manager{Home: home, Project: "/p"}.Kubeconfig("c"), "/p/clusters/c.kubeconfig"},
		{m.ProcessFile("c", "operator"), filepath.Join(home, "clusters", "c", "pids", "operator.pid")},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
}

// TestFindLooksInTheEmulators: a control plane behind an emulator's cluster is found under that
// emulator's home, and registering a process with it records it there.
func TestFindLooksInTheEmulators(t *testing.T) {
	home := t.TempDir()
	azure := paths.Locator{Home: home}.EmulatorControlPlanes(paths.Azure)
	if err := os.MkdirAll(Manager{Home: azure}.Dir("aks-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	m, ok := Find(home, "aks-1")
	if !ok || m.Home != azure {
		t.Fatalf("Find = %+v, %v; want the Azure emulator's home %s", m, ok, azure)
	}
	if err := m.Register("aks-1", "operator", os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.ProcessFile("aks-1", "operator")); err != nil {
		t.Fatal(err)
	}
	if m, ok := Find(home, "nowhere"); ok || m.Home != home {
		t.Fatalf("Find of a missing control plane = %+v, %v", m, ok)
	}
}
