package localkube

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/kubebin"
)

// writeBinaries writes a set of shell scripts answering `--version` / `version` as Kubernetes
// version would: the version check reads only that, and building a real nuv-kube of another
// Kubernetes version takes minutes (the refusal happens before anything else is run).
func writeBinaries(t *testing.T, version string, components ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, c := range components {
		script := "#!/bin/sh\necho Kubernetes " + version + "\n"
		if err := os.WriteFile(filepath.Join(dir, c), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPrepareBadInput(t *testing.T) {
	other := writeBinaries(t, "v1.35.2", kubebin.Components...)
	companion := filepath.Join(writeBinaries(t, "v1.35.2", "nuv-kube"), "nuv-kube")
	good := writeBinaries(t, "v"+KubeVersion, kubebin.Components...)
	partial := writeBinaries(t, "v"+KubeVersion, "etcd", "kube-apiserver")
	cases := []struct {
		name string
		env  map[string]string
		o    PrepareOptions
		want []string
	}{
		{"unknown version", nil, PrepareOptions{Version: "1.99.1"}, []string{`Kubernetes "1.99.1"`, "it has them for " + KubeVersion}},
		{"NUV_KUBE_BIN directory of another version", map[string]string{"NUV_KUBE_BIN": other}, PrepareOptions{},
			[]string{"NUV_KUBE_BIN=" + other, "is Kubernetes v1.35.2", "runs Kubernetes v" + KubeVersion}},
		{"NUV_KUBE_BIN companion of another version", map[string]string{"NUV_KUBE_BIN": companion}, PrepareOptions{},
			[]string{"NUV_KUBE_BIN=" + companion, "v1.35.2", "v" + KubeVersion}},
		{"--source DIR missing components", nil, PrepareOptions{Source: partial},
			[]string{partial, "no executable kube-controller-manager, kube-scheduler, kwok"}},
		{"--source a path that does not exist", nil, PrepareOptions{Source: "/nonexistent/kube"}, []string{"/nonexistent/kube", "no such file"}},
		{"--offline with --source download", nil, PrepareOptions{Source: SourceDownload, Offline: true}, []string{"--source download needs the network"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Companion{Getenv: func(k string) string { return tc.env[k] }, Log: cli.Quiet()}
			_, err := c.Prepare(context.Background(), tc.o)
			if err == nil {
				t.Fatal("prepare succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	t.Run("a directory of the right version", func(t *testing.T) {
		c := Companion{Getenv: func(k string) string { return map[string]string{"NUV_KUBE_BIN": good}[k] }}
		b, err := c.Prepare(context.Background(), PrepareOptions{})
		if err != nil || b.Path != good || b.Source != "given by NUV_KUBE_BIN="+good+" (a directory of binaries, v"+KubeVersion+")" {
			t.Fatalf("%+v, %v", b, err)
		}
	})
}

func TestComponentCommand(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "nuv-kube")
	os.WriteFile(file, []byte("#!/bin/sh\n"), 0o755)
	cases := []struct {
		bin      string
		args     []string
		wantPath string
		wantArgs []string
		wantErr  string
	}{
		{file, []string{"etcd", "--config", "/c.yaml"}, file, []string{"etcd", "--config", "/c.yaml"}, ""},
		{file, []string{"lb", "--listen", "x"}, file, []string{"lb", "--listen", "x"}, ""},
		{dir, []string{"etcd", "--config", "/c.yaml"}, filepath.Join(dir, "etcd"), []string{"--config-file", "/c.yaml"}, ""},
		{dir, []string{"kube-apiserver", "--secure-port=1"}, filepath.Join(dir, "kube-apiserver"), []string{"--secure-port=1"}, ""},
		{dir, []string{"lb", "--listen", "x"}, "", nil, "the HA balancer is part of nuv's companion"},
	}
	for _, tc := range cases {
		p, a, err := componentCommand(tc.bin, tc.args)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err %v", tc.args, err)
			}
			continue
		}
		if err != nil || p != tc.wantPath || !reflect.DeepEqual(a, tc.wantArgs) {
			t.Errorf("%s %v: got %s %v %v", tc.bin, tc.args, p, a, err)
		}
	}
}

// TestPrepareOrderFromCache: a cached download serves plain clusters; HA clusters (Balancer) take
// the cached nuv-kube instead, since only it has the balancer. Nothing touches the network.
func TestPrepareOrderFromCache(t *testing.T) {
	cache := t.TempDir()
	env := map[string]string{"NUV_CACHE_DIR": cache, "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	getenv := func(k string) string { return env[k] }
	set := kubebin.SetDir(cache, KubeVersion, "linux", "amd64")
	if err := os.MkdirAll(set, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range kubebin.Components {
		os.WriteFile(filepath.Join(set, c), []byte("#!/bin/sh\n"), 0o755)
	}
	os.WriteFile(filepath.Join(set, "origin.json"), []byte(`{"kubernetes":"1.36.3","platform":"linux/amd64","fetched":"2026-11-30T10:00:00Z",
"files":[{"component":"kube-apiserver","url":"https://dl.k8s.io/release/v1.36.3/bin/linux/amd64/kube-apiserver","sha256":"x","checked":["https://dl.k8s.io/release/v1.36.3/bin/linux/amd64/kube-apiserver.sha256"]}]}`), 0o644)
	c := Companion{Getenv: getenv, GOOS: "linux", GOARCH: "amd64"}
	b, err := c.Prepare(context.Background(), PrepareOptions{Offline: true})
	if err != nil || b.Path != set || b.Source != "downloaded from https://dl.k8s.io on 2026-11-30, SHA-256 verified against the release checksum files" {
		t.Fatalf("plain: %+v %v", b, err)
	}
	if got := c.Describe(context.Background()); !strings.HasPrefix(got, b.Source) {
		t.Errorf("describe %q", got)
	}
	// HA: the set has no balancer; a cached nuv-kube is taken.
	bin, _, dir, err := c.cachedBuild(context.Background())
	if err != nil || bin != "" {
		t.Fatalf("cachedBuild: %q %v", bin, err)
	}
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "nuv-kube"), []byte("#!/bin/sh\n"), 0o755)
	b, err = c.Prepare(context.Background(), PrepareOptions{Offline: true, Balancer: true})
	if err != nil || b.Path != filepath.Join(dir, "nuv-kube") || !strings.HasPrefix(b.Source, "built from source") {
		t.Fatalf("HA: %+v %v", b, err)
	}
}

func TestBinariesOf(t *testing.T) {
	home := t.TempDir()
	for _, s := range []*state{
		{Name: "a", Kubeconfig: "/p/clusters/a.kubeconfig", Binary: "/c/kubebin/v1.36.3-linux-amd64", BinarySource: "downloaded from https://dl.k8s.io", Ports: map[string]int{}},
		{Name: "old", Kubeconfig: "/p/clusters/old.kubeconfig", Binary: "/c/nuv-kube/x/nuv-kube", Ports: map[string]int{}},
	} {
		dir := StateDir(home, s.Name)
		os.MkdirAll(dir, 0o700)
		if err := saveState(dir, s); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct{ kubeconfig, name, source string }{
		{"/p/clusters/a.kubeconfig", "a", "downloaded from https://dl.k8s.io"},
		{"/p/clusters/old.kubeconfig", "old", "not recorded (created by an older nuv): /c/nuv-kube/x/nuv-kube"},
		{"/p/clusters/other.kubeconfig", "", ""},
		{"", "", ""},
	}
	for _, tc := range cases {
		name, src, ok := BinariesOf(home, tc.kubeconfig)
		if name != tc.name || src != tc.source || ok != (tc.name != "") {
			t.Errorf("%q: %q %q %v", tc.kubeconfig, name, src, ok)
		}
	}
}

// The kwok nuv builds for a downloaded set is the version the release table names for it.
func TestKwokBuildMatchesReleaseTable(t *testing.T) {
	for _, r := range kubebin.Releases() {
		if r.Kubernetes != KubeVersion {
			continue
		}
		if got := kwokModuleVersion(); got != "v"+r.Kwok {
			t.Fatalf("go.mod requires sigs.k8s.io/kwok %s, the release table names kwok %s", got, r.Kwok)
		}
		return
	}
	t.Fatalf("the release table has no Kubernetes %s", KubeVersion)
}
