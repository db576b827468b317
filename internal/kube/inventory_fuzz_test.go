package kube

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzInventory feeds arbitrary kubeconfigs in clusters/ to the inventory (what `task` lists): it
// must never panic, lists the file whatever it holds (an invalid one with its reason), and never
// shows a password of the server URL.
func FuzzInventory(f *testing.F) {
	f.Add([]byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://user:secret@127.0.0.1:6443", certificate-authority: ca.crt}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
users:
- name: u
  user: {token: abc}
`))
	f.Add([]byte("apiVersion: v1\nkind: Config\ncontexts: [{name: a, context: {cluster: missing}}]\n"))
	f.Add([]byte("{\"clusters\": null, \"current-context\": 1}"))
	project := f.TempDir()
	if err := os.MkdirAll(filepath.Join(project, "clusters"), 0o700); err != nil {
		f.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "NUV_HOME" {
			return filepath.Join(project, ".home")
		}
		return ""
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(project, "clusters", "fuzz"+Ext), data, 0o600); err != nil {
			t.Fatal(err)
		}
		cs, err := ListEnv(project, getenv)
		if err != nil {
			t.Fatalf("listing a directory with one kubeconfig: %v", err)
		}
		if len(cs) != 1 || cs[0].Name != "fuzz" || cs[0].Index != 1 {
			t.Fatalf("listed %+v, want the one file", cs)
		}
		c := cs[0]
		if c.Err != nil {
			if c.Err.Error() == "" {
				t.Fatal("an invalid kubeconfig without a reason")
			}
			return
		}
		if u, err := url.Parse(c.Server); err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok && p != "xxxxx" {
				t.Fatalf("server %q shows a password", c.Server)
			}
		}
		if strings.Contains(c.Server, "secret@") {
			t.Fatalf("server %q shows a password", c.Server)
		}
	})
}
