package paths

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLocatorLayout: the directories the locator names, and FindControlPlane's search order (the
// home's own cluster first, then the AWS, Azure and GCP emulators').
func TestLocatorLayout(t *testing.T) {
	l := Locator{Home: "/h"}
	for _, tc := range []struct{ got, want string }{
		{l.StateStore(), "/h/state"},
		{l.ControlPlanes(), "/h/clusters"},
		{l.ControlPlane("c"), "/h/clusters/c"},
		{l.Emulator(AWS), "/h/emulator"},
		{l.Emulator(Azure), "/h/emulator/azure"},
		{l.Emulator(GCP), "/h/emulator/gcp"},
		{l.EmulatorControlPlanes(AWS), "/h/emulator"},
		{l.EmulatorControlPlanes(Azure), "/h/emulator/azure"},
		{l.EmulatorControlPlanes(GCP), "/h/emulator/gcp/clusters"},
		{Kubeconfig("/p", "c"), "/p/clusters/c.kubeconfig"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}

	home := t.TempDir()
	l = Locator{Home: home}
	for _, tc := range []struct{ name, under string }{
		{"both", home},
		{"both", l.EmulatorControlPlanes(AWS)},
		{"eks", l.EmulatorControlPlanes(AWS)},
		{"aks", l.EmulatorControlPlanes(Azure)},
		{"gke", l.EmulatorControlPlanes(GCP)},
	} {
		if err := os.MkdirAll(Locator{Home: tc.under}.ControlPlane(tc.name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, home string
		ok         bool
	}{
		{"both", home, true},
		{"eks", filepath.Join(home, "emulator"), true},
		{"aks", filepath.Join(home, "emulator", "azure"), true},
		{"gke", filepath.Join(home, "emulator", "gcp", "clusters"), true},
		{"nowhere", home, false},
	} {
		if got, ok := l.FindControlPlane(tc.name); got != tc.home || ok != tc.ok {
			t.Errorf("FindControlPlane(%s) = %s, %v; want %s, %v", tc.name, got, ok, tc.home, tc.ok)
		}
	}
}
