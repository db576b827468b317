package state

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestOwnerOf: a store's owner id is a Google Cloud label value, the same for the same store
// however it is reached (a relative or absolute path; a Kubernetes store through any kubeconfig
// naming the same API server and namespace) and different for another store.
func TestOwnerOf(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	kube := func(server, ns string) Store {
		kc := filepath.Join(t.TempDir(), "kubeconfig")
		b := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + server + "}}]\nusers: [{name: u, user: {token: x}}]\n" +
			"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
		if err := os.WriteFile(kc, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
		k, err := NewKube(kc, ns)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	label := regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)
	for _, tc := range []struct {
		name string
		a, b Store
		same bool
	}{
		{"a directory, relative and absolute", Dir{Path: "state"}, Dir{Path: filepath.Join(dir, "state")}, true},
		{"two directories", Dir{Path: filepath.Join(dir, "a")}, Dir{Path: filepath.Join(dir, "b")}, false},
		{"one namespace, two kubeconfigs", kube("https://10.0.0.1:6443", "nuv"), kube("https://10.0.0.1:6443", "nuv"), true},
		{"two namespaces", kube("https://10.0.0.1:6443", "nuv"), kube("https://10.0.0.1:6443", "other"), false},
		{"two API servers", kube("https://10.0.0.1:6443", "nuv"), kube("https://10.0.0.2:6443", "nuv"), false},
	} {
		a, b := OwnerOf(tc.a), OwnerOf(tc.b)
		if !label.MatchString(a) || !label.MatchString(b) {
			t.Errorf("%s: %q, %q are not label values", tc.name, a, b)
		}
		if (a == b) != tc.same {
			t.Errorf("%s: %q and %q, want same=%v", tc.name, a, b, tc.same)
		}
	}
}
