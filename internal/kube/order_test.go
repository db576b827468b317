package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStableNumbering: numbers follow the order clusters were added to clusters/ (.nuv/order), so
// adding a kubeconfig that sorts first never renumbers the others; removing one moves the later
// ones up.
func TestStableNumbering(t *testing.T) {
	proj := project(t, map[string]string{
		"dev.kubeconfig":  kubeconfigFor("dev", "https://127.0.0.1:7001"),
		"prod.kubeconfig": kubeconfigFor("prod", "https://127.0.0.1:7002"),
	})
	names := func() string {
		t.Helper()
		cs, err := ListEnv(proj, envMap(t))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for i, c := range cs {
			if c.Index != i+1 {
				t.Errorf("%s has index %d at position %d", c.Name, c.Index, i+1)
			}
			out = append(out, c.Name)
		}
		return strings.Join(out, " ")
	}
	steps := []struct {
		label string
		do    func()
		want  string
	}{
		{"a first batch is numbered in name order", func() {}, "dev prod"},
		{"a kubeconfig sorting first is added last", func() {
			writeFile(t, proj, "clusters/broken.kubeconfig", "not: [a kubeconfig")
		}, "dev prod broken"},
		{"two more at once: name order among them", func() {
			writeFile(t, proj, "clusters/zeta.kubeconfig", kubeconfigFor("zeta", "https://127.0.0.1:7003"))
			writeFile(t, proj, "clusters/alpha.kubeconfig", kubeconfigFor("alpha", "https://127.0.0.1:7004"))
		}, "dev prod broken alpha zeta"},
		{"removing one moves the later ones up", func() {
			removeFile(t, filepath.Join(proj, "clusters", "prod.kubeconfig"))
		}, "dev broken alpha zeta"},
		{"added again counts as new", func() {
			writeFile(t, proj, "clusters/prod.kubeconfig", kubeconfigFor("prod", "https://127.0.0.1:7002"))
		}, "dev broken alpha zeta prod"},
		{"a damaged record line is ignored", func() {
			writeFile(t, proj, ".nuv/order", "dev\n\n  broken \nalpha\nzeta\nprod\ndev\n")
			writeFile(t, proj, "clusters/beta.kubeconfig", kubeconfigFor("beta", "https://127.0.0.1:7005"))
		}, "dev broken alpha zeta prod beta"},
	}
	for _, s := range steps {
		s.do()
		if got := names(); got != s.want {
			t.Errorf("%s: %s, want %s", s.label, got, s.want)
		}
		if got := names(); got != s.want {
			t.Errorf("%s, listed again: %s, want %s", s.label, got, s.want)
		}
	}
	c, err := ListEnv(proj, envMap(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Find(c, "1"); err != nil || got.Name != "dev" {
		t.Errorf("Find 1 = %s, %v; want dev", got.Name, err)
	}
}

// TestProjectKubeconfigLink: Select points .nuv/kubeconfig at the selected cluster's kubeconfig
// (a relative link inside the project), a new selection replaces it, Unselect removes it.
func TestProjectKubeconfigLink(t *testing.T) {
	proj := threeClusters(t)
	cs, err := ListEnv(proj, envMap(t))
	if err != nil {
		t.Fatal(err)
	}
	link := ProjectKubeconfig(proj)
	for _, c := range []Cluster{cs[1], cs[0]} {
		if err := Select(proj, c, ""); err != nil {
			t.Fatal(err)
		}
		dest, err := os.Readlink(link)
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join("..", "clusters", c.Name+Ext); dest != want {
			t.Errorf("link -> %s, want %s", dest, want)
		}
		got, err := os.ReadFile(link)
		want, _ := os.ReadFile(c.Path)
		if err != nil || string(got) != string(want) {
			t.Errorf("reading %s: %v, content differs from %s", link, err, c.Path)
		}
	}
	if entries, _ := filepath.Glob(link + ".*"); len(entries) != 0 {
		t.Errorf("temporary links left: %v", entries)
	}
	if err := Unselect(proj); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("Unselect left %s (%v)", link, err)
	}
}
