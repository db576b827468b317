package deploy

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	"github.com/nuv-dev/nuv/internal/deploy/statusview"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/proc"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSourceHashFollowsTheSources(t *testing.T) {
	p := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		f := filepath.Join(p, rel)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module x\n")
	write("operator/cmd/whisk-operator/main.go", "package main\n")
	write("operator/config/default/kustomization.yaml", "resources: []\n")
	o := Options{Project: p, Getenv: envOf(nil)}
	h1, err := sourceHash(o)
	if err != nil {
		t.Fatal(err)
	}
	write("operator/config/default/kustomization.yaml", "resources: [a]\n")
	if h2, _ := sourceHash(o); h2 != h1 {
		t.Error("a manifest change rebuilt the binary")
	}
	write("operator/controller/x.go", "package controller\n")
	h3, _ := sourceHash(o)
	if h3 == h1 {
		t.Error("a new source file kept the hash")
	}
	write("go.mod", "module x\n\ngo 1.26\n")
	if h4, _ := sourceHash(o); h4 == h3 {
		t.Error("a go.mod change kept the hash")
	}
	if got := mainPackage(o); got != "./operator/cmd/whisk-operator" {
		t.Errorf("main package = %s", got)
	}
	o.Getenv = envOf(map[string]string{"NUV_OPERATOR_MAIN": "./cmd/op"})
	if got := mainPackage(o); got != "./cmd/op" {
		t.Errorf("main package = %s", got)
	}
}

func TestServiceAccountOf(t *testing.T) {
	d := &unstructured.Unstructured{Object: map[string]any{"kind": "Deployment", "metadata": map[string]any{"name": "op", "namespace": "sys"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"serviceAccountName": "op-sa"}}}}}
	ns, sa, err := serviceAccountOf([]*unstructured.Unstructured{{Object: map[string]any{"kind": "Namespace"}}, d})
	if err != nil || ns != "sys" || sa != "op-sa" {
		t.Errorf("got %s %s %v", ns, sa, err)
	}
	if _, _, err := serviceAccountOf(nil); err == nil {
		t.Error("no Deployment accepted")
	}
}

func TestRunningChecksPidAndStartTime(t *testing.T) {
	home := t.TempDir()
	h := newHostRun(home, "c1")
	if _, _, ok := h.running(); ok {
		t.Fatal("running without a pid file")
	}
	if err := os.MkdirAll(filepath.Dir(h.pidFile()), 0o755); err != nil {
		t.Fatal(err)
	}
	_, start, err := proc.Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		content string
		ok      bool
	}{
		{me + " " + strconv.FormatUint(start, 10) + "\n", true},
		{me + "\n", true},
		{me + " " + strconv.FormatUint(start+1, 10) + "\n", false}, // pid reused by another process
		{"999999999 1\n", false},
		{"garbage\n", false},
	} {
		if err := os.WriteFile(h.pidFile(), []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		pid, bin, ok := h.running()
		if ok != tc.ok {
			t.Errorf("%q: running = %v", tc.content, ok)
		}
		if ok && (pid != os.Getpid() || bin == "") {
			t.Errorf("%q: pid %d bin %q", tc.content, pid, bin)
		}
	}
}

func TestSplitRef(t *testing.T) {
	for _, tc := range []struct{ ref, name, tag, digest string }{
		{"a/b", "a/b", "", ""},
		{"localhost:5000/a/b:v1", "localhost:5000/a/b", "v1", ""},
		{"localhost:5000/a/b", "localhost:5000/a/b", "", ""},
		{"a/b@sha256:00", "a/b", "", "sha256:00"},
		{"a/b:v1@sha256:00", "a/b", "v1", "sha256:00"},
	} {
		n, tg, d := splitRef(tc.ref)
		if n != tc.name || tg != tc.tag || d != tc.digest {
			t.Errorf("%s: got %s %s %s", tc.ref, n, tg, d)
		}
		if j := joinRef(n, tg, d); tc.digest == "" && j != tc.ref {
			t.Errorf("%s: joined %s", tc.ref, j)
		}
	}
}

// The host operator of a cloud emulator's cluster lives with that cluster's control plane: under
// the AWS, Azure or GKE emulator's directory, whichever made it; a cluster of home's own comes first.
func TestNewHostRunFindsEmulatorControlPlanes(t *testing.T) {
	home := t.TempDir()
	aws := filepath.Join(home, "emulator")
	for _, tc := range []struct{ cluster, stateHome string }{
		{"own", home},
		{"eks-c", aws},
		{"aks-rg-c-1a2b3c", filepath.Join(aws, "azure")},
		{"c-4d5e6f", filepath.Join(aws, "gcp", "clusters")},
	} {
		if err := os.MkdirAll(localkube.StateDir(tc.stateHome, tc.cluster), 0o755); err != nil {
			t.Fatal(err)
		}
		h := newHostRun(home, tc.cluster)
		if h.home != tc.stateHome || h.stateDir != localkube.StateDir(tc.stateHome, tc.cluster) {
			t.Errorf("%s: host run under %s (state %s), want %s", tc.cluster, h.home, h.stateDir, tc.stateHome)
		}
	}
	// Unknown everywhere: home's (so the error names home).
	if h := newHostRun(home, "nowhere"); h.home != home {
		t.Errorf("unknown cluster: host run under %s, want %s", h.home, home)
	}
}

// TestHostFilesAsStatusReadsThem: `nuv status` (package statusview, which the slim front uses
// too) looks for the host-run operator's pid file and log where nuv operator keeps them: for a
// control plane of the home and for one behind an emulator's cluster.
func TestHostFilesAsStatusReadsThem(t *testing.T) {
	home := t.TempDir()
	own := paths.Locator{Home: home}.ControlPlane("own")
	emulated := paths.Locator{Home: paths.Locator{Home: home}.EmulatorControlPlanes(paths.Emulators[0])}.ControlPlane("emu")
	for _, d := range []string{own, emulated} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"own", "emu", "absent"} {
		h := newHostRun(home, name)
		pid, log := statusview.HostFiles(home, name)
		if pid != h.pidFile() || log != h.logFile() {
			t.Errorf("%s: status reads %s and %s; nuv operator writes %s and %s", name, pid, log, h.pidFile(), h.logFile())
		}
	}
}
