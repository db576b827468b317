package addons

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestChartRepositorySource serves a real chart repository (index.yaml and the archive) on
// loopback and renders a chart from it with values from the index and from a stack: the digest
// the repository lists is checked, and a pinned digest that does not match is refused.
func TestChartRepositorySource(t *testing.T) {
	archive := chartArchive(t, "metrics", "1.2.3", map[string]any{"replicas": 1, "image": "m:1", "retention": "1d"},
		map[string]string{"deployment.yaml": webDeployment, "config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}-config}\ndata: {retention: {{ .Values.retention | quote }}}\n"})
	listed := strings.TrimPrefix(digestOf(archive), "sha256:")
	mux := http.NewServeMux()
	mux.HandleFunc("/repo/index.yaml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "apiVersion: v1\nentries:\n  metrics:\n  - name: metrics\n    version: 1.2.3\n    apiVersion: v2\n    digest: %s\n    urls: [charts/metrics-1.2.3.tgz]\n", listed)
	})
	mux.HandleFunc("/repo/charts/metrics-1.2.3.tgz", func(w http.ResponseWriter, r *http.Request) { w.Write(archive) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	dir := t.TempDir()
	idxText := func(digest string) string {
		d := ""
		if digest != "" {
			d = ", digest: " + digest
		}
		return fmt.Sprintf(`apiVersion: nuv.dev/v1alpha1
kind: Addons
spec:
  addons:
  - name: metrics
    namespace: monitoring
    version: 1.2.3
    source: {chart: {repo: %q, name: metrics, version: 1.2.3, values: {replicas: 3, retention: 7d}}%s}
  stacks:
  - {name: observability, addons: [metrics], values: {retention: 30d}}
`, srv.URL+"/repo", d)
	}
	writeFiles(t, dir, map[string]string{"index.yaml": idxText("")})
	idx, err := Load(filepath.Join(dir, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	f := &Fetcher{CacheDir: t.TempDir()}
	r, err := f.render(context.Background(), idx.Get("metrics"), "v1.36.3")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range r.Objects {
		got[o.GetKind()+"/"+o.GetName()] = fmt.Sprint(o.Object["spec"], o.Object["data"])
	}
	if !strings.Contains(got["Deployment/metrics"], "replicas:3") || !strings.Contains(got["Deployment/metrics"], "image:m:1") {
		t.Errorf("deployment: chart defaults and index values not merged: %s", got["Deployment/metrics"])
	}
	if !strings.Contains(got["ConfigMap/metrics-config"], "retention:30d") {
		t.Errorf("configmap: the stack's values must win over the add-on's: %s", got["ConfigMap/metrics-config"])
	}

	// a pinned digest that matches is fine (and cached); one that does not is refused
	writeFiles(t, dir, map[string]string{"index.yaml": idxText(digestOf(archive))})
	if idx, err = Load(filepath.Join(dir, "index.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.render(context.Background(), idx.Get("metrics"), ""); err != nil {
		t.Fatalf("matching digest: %v", err)
	}
	bad := "sha256:" + strings.Repeat("a", 64)
	writeFiles(t, dir, map[string]string{"index.yaml": idxText(bad)})
	if idx, err = Load(filepath.Join(dir, "index.yaml")); err != nil {
		t.Fatal(err)
	}
	_, err = f.render(context.Background(), idx.Get("metrics"), "")
	var de *DigestError
	if !errors.As(err, &de) || de.Want != bad {
		t.Fatalf("mismatching digest: %v", err)
	}

	// the repository's own digest is checked too
	listed = strings.Repeat("b", 64)
	writeFiles(t, dir, map[string]string{"index.yaml": idxText("")})
	if idx, err = Load(filepath.Join(dir, "index.yaml")); err != nil {
		t.Fatal(err)
	}
	_, err = f.render(context.Background(), idx.Get("metrics"), "")
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "digest listed by") {
		t.Fatalf("archive not matching the repository index: %v", err)
	}
}

func TestPlainHTTPHosts(t *testing.T) {
	f := &Fetcher{PlainHTTP: []string{"registry.lan:5000"}}
	for ref, want := range map[string]bool{
		"127.0.0.1:5000/charts/a:1": true, "localhost:5000/a:1": true, "[::1]:5000/a:1": true,
		"registry.lan:5000/a:1": true, "ghcr.io/org/a:1": false,
	} {
		if got := f.plainHTTP(ref); got != want {
			t.Errorf("plainHTTP(%s) = %v, want %v", ref, got, want)
		}
	}
}
