package nodeimage

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image/buildcache"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s differs:\n%s\nwant\n%s", p, got, want)
	}
}

func TestKeys(t *testing.T) {
	d := Debian{Suite: "bookworm", Mirror: "http://deb.debian.org/debian"}
	base := rootfsKey(d, "amd64")
	if base != rootfsKey(d, "amd64") {
		t.Fatal("rootfsKey is not deterministic")
	}
	for name, other := range map[string]string{
		"suite":  rootfsKey(Debian{Suite: "trixie", Mirror: d.Mirror}, "amd64"),
		"mirror": rootfsKey(Debian{Suite: d.Suite, Mirror: "http://mirror.corp/debian"}, "amd64"),
		"arch":   rootfsKey(d, "arm64"),
	} {
		if other == base {
			t.Errorf("changing the %s does not change the root file system's key", name)
		}
	}
	saved := Packages
	Packages = append(append([]string(nil), saved...), "vim")
	if rootfsKey(d, "amd64") == base {
		t.Error("changing the package list does not change the key")
	}
	Packages = saved
	// Key separates its parts: ("ab","c") and ("a","bc") differ
	if buildcache.Key("ab", "c") == buildcache.Key("a", "bc") {
		t.Fatal("Key runs parts together")
	}
	if sourcesHash() == "" || sourcesHash() != sourcesHash() {
		t.Fatal("sourcesHash is empty or not deterministic")
	}
}

func TestCacheEntryCorruptIsRebuilt(t *testing.T) {
	root := t.TempDir()
	builds := 0
	fill := func(tmp string) ([]string, error) {
		builds++
		return []string{"a"}, os.WriteFile(filepath.Join(tmp, "a"), []byte("content"), 0o644)
	}
	dir, err := buildcache.Publish(root, "k1", "", fill)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := buildcache.Lookup(root, "k1"); !ok {
		t.Fatal("a published entry is not valid")
	}
	if _, ok, _ := buildcache.Lookup(root, "k2"); ok {
		t.Fatal("an entry of another key is valid")
	}
	// damage the file: the entry is corrupt, and publishing again rebuilds it
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("contenT"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, corrupt := buildcache.Lookup(root, "k1"); ok || !corrupt {
		t.Fatalf("a damaged entry: ok %v corrupt %v, want false true", ok, corrupt)
	}
	b := &builder{log: cli.Quiet()}
	var got string
	wasCached, err := b.cachedEntry(root, "k1", &got, fill)
	if err != nil || wasCached || builds != 2 {
		t.Fatalf("cachedEntry of a damaged entry: cached %v, builds %d, err %v", wasCached, builds, err)
	}
	if b, _ := os.ReadFile(filepath.Join(got, "a")); string(b) != "content" {
		t.Fatalf("rebuilt entry holds %q", b)
	}
	wasCached, err = b.cachedEntry(root, "k1", &got, fill)
	if err != nil || !wasCached || builds != 2 {
		t.Fatalf("cachedEntry of a valid entry: cached %v, builds %d, err %v", wasCached, builds, err)
	}
	// a missing manifest is corrupt too
	os.Remove(filepath.Join(got, buildcache.ManifestFile))
	if _, ok, corrupt := buildcache.Lookup(root, "k1"); ok || !corrupt {
		t.Fatal("an entry without its manifest is used")
	}
}

func TestContainerdConfigGolden(t *testing.T) {
	kind := kindConfig(t)
	got, err := ContainerdConfig(string(kind), "registry.k8s.io/pause:3.10.2", true)
	if err != nil {
		t.Fatal(err)
	}
	// the golden file holds the edited lines only: kind's file stays in the kind module
	in, out := strings.Split(string(kind), "\n"), strings.Split(got, "\n")
	if len(in) != len(out) {
		t.Fatalf("ContainerdConfig changed the number of lines: %d -> %d", len(in), len(out))
	}
	var diff []string
	for i := range in {
		if in[i] != out[i] {
			diff = append(diff, "- "+in[i], "+ "+out[i])
		}
	}
	golden(t, "containerd-config.golden.diff", []byte(strings.Join(diff, "\n")+"\n"))
	if _, err := ContainerdConfig("version = 2\n", "p", true); err == nil || !strings.Contains(err.Error(), "sandbox_image") {
		t.Fatalf("a config without sandbox_image: %v", err)
	}
}

func TestCRIBaseSpecGolden(t *testing.T) {
	spec, err := os.ReadFile("testdata/ctr-oci-spec.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := CRIBaseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "cri-base.golden.json", got)
	if _, err := CRIBaseSpec([]byte("nope")); err == nil {
		t.Fatal("CRIBaseSpec accepted non-JSON")
	}
}

func TestCNIManifest(t *testing.T) {
	m := CNIManifest(PodnetImage("1.36.3"))
	golden(t, "default-cni.golden.yaml", []byte(m))
	// every document parses, and the DaemonSet's first container has an env list (kind's patch
	// appends CONTROL_PLANE_ENDPOINT to it)
	var kinds []string
	for _, doc := range strings.Split(m, "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("document does not parse: %v\n%s", err, doc)
		}
		kinds = append(kinds, obj["kind"].(string))
		if obj["kind"] == "DaemonSet" {
			b, _ := json.Marshal(obj)
			if !strings.Contains(string(b), `"env":[{"name":"NODE_NAME"`) || !strings.Contains(string(b), `"image":"nuv.dev/nuv-podnet:v1.36.3"`) {
				t.Fatalf("DaemonSet: %s", b)
			}
		}
	}
	if strings.Join(kinds, ",") != "ServiceAccount,ClusterRole,ClusterRoleBinding,DaemonSet" {
		t.Fatalf("kinds %v", kinds)
	}
	if !strings.Contains(m, "would you kindly patch this file") {
		t.Fatal("the manifest does not ask kind for CONTROL_PLANE_ENDPOINT")
	}
}

func TestComponents(t *testing.T) {
	list := []string{"registry.k8s.io/kube-apiserver:v1.36.3", "registry.k8s.io/kube-controller-manager:v1.36.3", "registry.k8s.io/kube-scheduler:v1.36.3",
		"registry.k8s.io/kube-proxy:v1.36.3", "registry.k8s.io/coredns/coredns:v1.14.2", "registry.k8s.io/pause:3.10.2", "registry.k8s.io/etcd:3.6.8-0"}
	cs, err := components(list, "1.36.3", "3.6.16")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.Ref+" "+c.Command)
	}
	want := []string{
		"nuv.dev/nuv-podnet:v1.36.3 nuv-podnet",
		"registry.k8s.io/coredns/coredns:v1.14.2 coredns",
		"registry.k8s.io/etcd:3.6.8-0 etcd",
		"registry.k8s.io/kube-apiserver:v1.36.3 kube-apiserver",
		"registry.k8s.io/kube-controller-manager:v1.36.3 kube-controller-manager",
		"registry.k8s.io/kube-proxy:v1.36.3 kube-proxy",
		"registry.k8s.io/kube-scheduler:v1.36.3 kube-scheduler",
		"registry.k8s.io/pause:3.10.2 pause",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("components:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := components([]string{"registry.k8s.io/something-new:v1"}, "1.36.3", ""); err == nil || !strings.Contains(err.Error(), "something-new") {
		t.Fatalf("an image nuv cannot assemble: %v", err)
	}
}

func TestHostDebian(t *testing.T) {
	etc := t.TempDir()
	os.MkdirAll(filepath.Join(etc, "apt", "sources.list.d"), 0o755)
	os.WriteFile(filepath.Join(etc, "os-release"), []byte("NAME=\"Debian GNU/Linux\"\nVERSION_CODENAME=bookworm\n"), 0o644)
	os.WriteFile(filepath.Join(etc, "apt", "sources.list.d", "debian.sources"), []byte(`Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main

Types: deb
# a comment: with a colon
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
`), 0o644)
	env := func(string) string { return "" }
	d, err := HostDebian(env, etc)
	if err != nil || d != (Debian{Suite: "bookworm", Mirror: "http://deb.debian.org/debian"}) {
		t.Fatalf("HostDebian = %+v, %v", d, err)
	}
	// the one-line format
	os.Remove(filepath.Join(etc, "apt", "sources.list.d", "debian.sources"))
	os.WriteFile(filepath.Join(etc, "apt", "sources.list"), []byte("deb [signed-by=/k.gpg] http://mirror.corp/debian bookworm main\n"), 0o644)
	if d, err := HostDebian(env, etc); err != nil || d.Mirror != "http://mirror.corp/debian" {
		t.Fatalf("HostDebian (sources.list) = %+v, %v", d, err)
	}
	// nothing serves the suite: a clear message
	os.WriteFile(filepath.Join(etc, "apt", "sources.list"), []byte("deb http://mirror.corp/debian trixie main\n"), 0o644)
	if _, err := HostDebian(env, etc); err == nil || !strings.Contains(err.Error(), "NUV_DEBIAN_MIRROR") {
		t.Fatalf("no source for the suite: %v", err)
	}
	// the settings win
	set := map[string]string{"NUV_DEBIAN_SUITE": "trixie", "NUV_DEBIAN_MIRROR": "http://m/debian"}
	if d, err := HostDebian(func(k string) string { return set[k] }, etc); err != nil || d != (Debian{"trixie", "http://m/debian"}) {
		t.Fatalf("HostDebian with settings = %+v, %v", d, err)
	}
}

// kindConfig reads kind's containerd configuration from the kind module nuv depends on.
func kindConfig(t *testing.T) []byte {
	t.Helper()
	dir, _, err := kindModule(context.Background(), os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, kindBaseFiles, "etc/containerd/config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
