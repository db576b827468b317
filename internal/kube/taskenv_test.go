package kube

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/kube/kubesel"
)

// TestSelectionEnvWithoutClientGo: the task program's reader (kubesel.SelectionEnv, no client-go)
// gives tasks the same KUBECONFIG and KUBE as SelectionEnv (Resolve with client-go's reader) for
// every selection and kubeconfig, the same reason when a selection cannot be used (naming the
// file for a bad kubeconfig), and defers (kubesel.ErrUnvouched, naming the file) exactly on the
// kubeconfigs only client-go can read.
func TestSelectionEnvWithoutClientGo(t *testing.T) {
	kubeconfigs := map[string]string{
		"a": kubeconfigFor("a", "https://127.0.0.1:7001"),
		"b": kubeconfigFor("b", "https://127.0.0.1:7002"),
		"c": kubeconfigFor("c", "https://127.0.0.1:7003"),
		// unusable: both readers refuse them, the error names the file
		"nocontexts": "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n",
		"noserver":   strings.Replace(kubeconfigFor("ns", "x"), `server: "x", `, "", 1),
		"nouser":     strings.Replace(kubeconfigFor("nu", "https://127.0.0.1:7004"), "- name: nu-user", "- name: other-user", 1),
		"undefined":  strings.Replace(kubeconfigFor("ud", "https://127.0.0.1:7005"), "current-context: ud", "current-context: missing", 1),
		// only client-go can tell (malformed YAML, another kind, YAML 1.1, anchors, extensions): the
		// new reader defers, naming the file
		"syntax":    "apiVersion: v1\nkind: Config\nclusters: [oops\n",
		"empty":     "",
		"wrongkind": "apiVersion: v1\nkind: Pod\n",
		"yaml11":    strings.Replace(kubeconfigFor("y", "https://127.0.0.1:7006"), "insecure-skip-tls-verify: true", "insecure-skip-tls-verify: yes", 1),
		"anchor":    "apiVersion: v1\nkind: Config\ncurrent-context: an\ncontexts:\n- name: an\n  context: &c {cluster: an, user: an}\nclusters:\n- name: an\n  cluster: {server: \"https://127.0.0.1:7007\"}\nusers:\n- name: an\n  user: {token: t}\n",
		"extension": strings.Replace(kubeconfigFor("ex", "https://127.0.0.1:7008"), "current-context: ex",
			"current-context: ex\nextensions:\n- name: cluster_info\n  extension: {provider: example, version: v1}", 1),
	}
	files := map[string]string{}
	for n, c := range kubeconfigs {
		files[n+Ext] = c
	}
	proj := project(t, files)
	clusters := filepath.Join(proj, "clusters")
	writeFile(t, proj, "clusters/c.type", "eks\n")
	writeFile(t, proj, "clusters/syntax.type", "kind\n")
	writeFile(t, proj, "clusters/badtype.kubeconfig", kubeconfigFor("bt", "https://127.0.0.1:7009"))
	writeFile(t, proj, "clusters/badtype.type", "openshift\n")
	if err := Remember(proj, "b", filepath.Join(clusters, "b"+Ext), TypeKind); err != nil {
		t.Fatal(err)
	}
	outside := writeFile(t, t.TempDir(), "x.kubeconfig", kubeconfigFor("x", "https://127.0.0.1:7100"))
	outsideBad := writeFile(t, t.TempDir(), "z.kubeconfig", "this: [is not a kubeconfig")
	outsideExt := writeFile(t, t.TempDir(), "e.kubeconfig", kubeconfigs["extension"])
	home := t.TempDir()
	writeFile(t, home, "config.json", `{"detect": {"force": "aks"}}`)
	unvouched := map[string]bool{outsideBad: true, outsideExt: true}
	for _, n := range []string{"syntax", "empty", "wrongkind", "yaml11", "anchor", "extension"} {
		unvouched[filepath.Join(clusters, n+Ext)] = true
	}
	badHome := t.TempDir()
	writeFile(t, badHome, "config.json", `{"detect": {"force": "nope"}}`)

	cases := []struct {
		label    string
		selected string // .nuv/current names it ("" none; "!damaged" a damaged file)
		env      []string
	}{
		{label: "nothing selected"},
		{label: "nothing selected, KUBECONFIG set", env: []string{"KUBECONFIG", outside}},
		{label: "selected", selected: "a"},
		{label: "selected, remembered type", selected: "b"},
		{label: "selected, type file", selected: "c"},
		{label: "selected, type file beats DETECT_FORCE", selected: "c", env: []string{"DETECT_FORCE", "k3s"}},
		{label: "selected, DETECT_FORCE", selected: "b", env: []string{"DETECT_FORCE", "k3s"}},
		{label: "selected, detect.force", selected: "a", env: []string{"NUV_HOME", home}},
		{label: "selected, detect.force invalid", selected: "a", env: []string{"NUV_HOME", badHome}},
		{label: "selected, DETECT_FORCE invalid", selected: "a", env: []string{"DETECT_FORCE", "kube"}},
		{label: "selected, type file invalid", selected: "badtype"},
		{label: "KUBE", selected: "c", env: []string{EnvType, "kind"}},
		{label: "KUBE invalid", selected: "a", env: []string{EnvType, "openshift"}},
		{label: "removed from clusters/", selected: "gone"},
		{label: "damaged .nuv/current", selected: "!damaged"},
		{label: "NUV_CLUSTER", selected: "a", env: []string{EnvCluster, "c"}},
		{label: "NUV_CLUSTER without a selection", env: []string{EnvCluster, "b"}},
		{label: "NUV_CLUSTER as a path of clusters/", env: []string{EnvCluster, filepath.Join(clusters, "c"+Ext)}},
		{label: "NUV_CLUSTER as a path outside", env: []string{EnvCluster, outside, "DETECT_FORCE", "gke"}},
		{label: "NUV_CLUSTER as a malformed path outside", env: []string{EnvCluster, outsideBad}},
		{label: "NUV_CLUSTER naming nothing", selected: "a", env: []string{EnvCluster, "nope"}},
		{label: "NUV_CLUSTER naming a missing path", env: []string{EnvCluster, "/nonexistent/k.kubeconfig"}},
		{label: "KUBECONFIG beats the selection", selected: "a", env: []string{"KUBECONFIG", outside}},
		{label: "KUBECONFIG of clusters/", selected: "a", env: []string{"KUBECONFIG", filepath.Join(clusters, "b"+Ext)}},
		{label: "KUBECONFIG the project's link", selected: "a", env: []string{"KUBECONFIG", ProjectKubeconfig(proj)}},
		{label: "KUBECONFIG the selected file", selected: "c", env: []string{"KUBECONFIG", filepath.Join(clusters, "c"+Ext)}},
		{label: "KUBECONFIG list", selected: "a", env: []string{"KUBECONFIG", outside + string(os.PathListSeparator) + outsideBad}},
		{label: "KUBECONFIG missing", selected: "a", env: []string{"KUBECONFIG", "/nonexistent/k.kubeconfig"}},
		{label: "KUBECONFIG malformed", selected: "a", env: []string{"KUBECONFIG", outsideBad}},
		{label: "KUBECONFIG with an extension", selected: "a", env: []string{"KUBECONFIG", outsideExt}},
	}
	for n := range kubeconfigs {
		cases = append(cases, struct {
			label    string
			selected string
			env      []string
		}{label: "selected kubeconfig " + n, selected: n})
	}
	for _, tc := range cases {
		t.Run(tc.label, func(t *testing.T) {
			if err := Unselect(proj); err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.selected == "!damaged":
				writeFile(t, proj, ".nuv/current", "{not json")
			case tc.selected != "":
				if err := Select(proj, Cluster{Name: tc.selected, Path: filepath.Join(clusters, tc.selected+Ext)}, ""); err != nil {
					t.Fatal(err)
				}
			}
			getenv := envMap(t, tc.env...)
			old, oldErr := SelectionEnv(proj, getenv)
			got, err := kubesel.SelectionEnv(proj, getenv)
			if errors.Is(err, kubesel.ErrUnvouched) {
				named := false
				for p := range unvouched {
					named = named || strings.Contains(err.Error(), "("+p+",")
				}
				if !named {
					t.Fatalf("the new reader deferred a kubeconfig it reads: %v (client-go's reader: %q %v)", err, old, oldErr)
				}
				if got != nil {
					t.Errorf("deferred with variables %q", got)
				}
				return
			}
			if !slices.Equal(got, old) {
				t.Errorf("variables: new reader %q, client-go's %q", got, old)
			}
			if (err == nil) != (oldErr == nil) || err != nil && err.Error() != oldErr.Error() {
				t.Errorf("error: new reader %v\n          client-go's %v", err, oldErr)
			}
			if errors.Is(err, ErrNoSelection) != errors.Is(oldErr, ErrNoSelection) {
				t.Errorf("ErrNoSelection: new reader %v, client-go's %v", errors.Is(err, ErrNoSelection), errors.Is(oldErr, ErrNoSelection))
			}
			if oldErr != nil && strings.Contains(oldErr.Error(), "invalid kubeconfig") && !strings.Contains(err.Error(), ".kubeconfig") {
				t.Errorf("error %q names no file", err)
			}
		})
	}
}
