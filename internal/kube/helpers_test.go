package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// kubeconfigFor returns a valid kubeconfig whose context name is ctx and server is server.
func kubeconfigFor(ctx, server string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: %[1]s
contexts:
- name: %[1]s
  context: {cluster: %[1]s-cluster, user: %[1]s-user}
clusters:
- name: %[1]s-cluster
  cluster: {server: %[2]q, insecure-skip-tls-verify: true}
users:
- name: %[1]s-user
  user: {token: s3cret-%[1]s}
`, ctx, server)
}

// writeFile writes content under dir, creating parents.
func writeFile(t testing.TB, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// project creates a project with the given kubeconfigs (name -> content).
func project(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "clusters"), 0o755); err != nil {
		t.Fatal(err)
	}
	for n, c := range files {
		writeFile(t, dir, filepath.Join("clusters", n), c)
	}
	return dir
}

// envMap is a getenv over a map; NUV_HOME points into a temp dir so no real config is read.
func envMap(t testing.TB, kv ...string) func(string) string {
	m := map[string]string{"NUV_HOME": t.TempDir()}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func removeFile(t testing.TB, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}
