package addons

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	helmregistry "helm.sh/helm/v3/pkg/registry"

	"sigs.k8s.io/yaml"

	"github.com/nuv-dev/nuv/internal/registry"
)

// startRegistry serves nuv's registry (internal/registry) on a loopback port for the test and
// returns its host:port.
func startRegistry(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	h, err := registry.NewHandler(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := registry.ReadPushToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pushTokens.Store(ln.Addr().String(), tok)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { registry.Serve(ctx, ln, h); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}

// pushTokens holds the push token of each registry startRegistry serves, by host:port.
var pushTokens sync.Map

// chartArchive packages a chart made of the given templates (name -> text) and default values,
// the way `helm package` does (chartutil.Save), and returns the .tgz bytes.
func chartArchive(t testing.TB, name, version string, values map[string]any, templates map[string]string) []byte {
	t.Helper()
	c := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: version, AppVersion: version, Type: "application"},
		Values:   values,
	}
	vy, err := yaml.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	c.Raw = []*chart.File{{Name: chartutil.ValuesfileName, Data: vy}} // what Save writes as values.yaml
	for n, text := range templates {
		c.Templates = append(c.Templates, &chart.File{Name: filepath.Join("templates", n), Data: []byte(text)})
	}
	dir := t.TempDir()
	p, err := chartutil.Save(c, dir)
	if err != nil {
		t.Fatalf("package chart %s: %v", name, err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// pushChart pushes a chart archive to oci://<host>/charts/<name>:<version> with the Helm SDK.
func pushChart(t testing.TB, host string, data []byte, name, version string) {
	t.Helper()
	tok, _ := pushTokens.Load(host)
	pass, _ := tok.(string)
	rc, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP(), helmregistry.ClientOptBasicAuth(registry.PushUser, pass))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Push(data, host+"/charts/"+name+":"+version); err != nil {
		t.Fatalf("push chart %s %s: %v", name, version, err)
	}
}

// writeFiles writes name -> content under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for n, c := range files {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
