package kube

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolvePrecedence is the table of every source of "which cluster" and "which type", and
// their precedence (Resolve's documentation, one row each).
func TestResolvePrecedence(t *testing.T) {
	proj := threeClusters(t)
	cs, err := ListEnv(proj, envMap(t))
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := cs[0], cs[1], cs[2]
	if err := Remember(proj, "b", b.Path, TypeKind); err != nil {
		t.Fatal(err)
	}
	writeFile(t, proj, "clusters/c.type", "eks\n")
	outside := writeFile(t, t.TempDir(), "x.kubeconfig", kubeconfigFor("x", "https://127.0.0.1:7100"))
	other := writeFile(t, t.TempDir(), "other.kubeconfig", kubeconfigFor("other", "https://127.0.0.1:7200"))
	broken := writeFile(t, t.TempDir(), "z.kubeconfig", "this: [is not a kubeconfig")
	home := t.TempDir()
	writeFile(t, home, "config.json", `{"detect": {"force": "aks"}}`)

	type want struct {
		name, path, typ, typeFrom string
		src                       Source
		err                       string
		noSelection               bool
	}
	cases := []struct {
		label    string
		selected string // the project's .nuv/current ("" none)
		explicit string
		env      []string
		want     want
	}{
		{label: "nothing at all", want: want{noSelection: true, err: "nuv kube use N"}},
		{label: "KUBECONFIG alone", env: []string{"KUBECONFIG", outside},
			want: want{name: "x", path: outside, src: FromKubeconfig}},
		{label: "KUBECONFIG naming a cluster of clusters/ gets its remembered type", env: []string{"KUBECONFIG", b.Path},
			want: want{name: "b", path: b.Path, src: FromKubeconfig, typ: TypeKind, typeFrom: "remembered"}},
		{label: "KUBECONFIG list refused", env: []string{"KUBECONFIG", outside + ":" + other},
			want: want{noSelection: true, err: "lists several files"}},
		{label: "KUBECONFIG missing file", env: []string{"KUBECONFIG", "/nonexistent/k.kubeconfig"},
			want: want{err: "/nonexistent/k.kubeconfig"}},
		{label: "an explicit KUBECONFIG beats the project selection (as for kubectl)", selected: "a", env: []string{"KUBECONFIG", outside},
			want: want{name: "x", path: outside, src: FromKubeconfig}},
		{label: "KUBECONFIG naming the project's kubeconfig link is the project selection", selected: "a", env: []string{"KUBECONFIG", ProjectKubeconfig(proj)},
			want: want{name: "a", path: a.Path, src: FromProject}},
		{label: "KUBECONFIG naming the selected cluster's file (what tasks get) is the project selection", selected: "a", env: []string{"KUBECONFIG", a.Path},
			want: want{name: "a", path: a.Path, src: FromProject}},
		{label: "the project's link with nothing selected says how to select", env: []string{"KUBECONFIG", ProjectKubeconfig(proj)},
			want: want{noSelection: true, err: "nuv kube use N"}},
		{label: "NUV_CLUSTER beats an explicit KUBECONFIG", selected: "a", env: []string{EnvCluster, "c", "KUBECONFIG", outside},
			want: want{name: "c", path: c.Path, src: FromShell, typ: TypeEKS, typeFrom: OverridePath(proj, "c")}},
		{label: "a KUBECONFIG list is refused even with a selection", selected: "a", env: []string{"KUBECONFIG", outside + ":" + other},
			want: want{noSelection: true, err: "lists several files"}},
		{label: "NUV_CLUSTER beats the project selection", selected: "a", env: []string{EnvCluster, "b"},
			want: want{name: "b", path: b.Path, src: FromShell, typ: TypeKind, typeFrom: "remembered"}},
		{label: "NUV_CLUSTER as a path outside clusters/", selected: "a", env: []string{EnvCluster, outside},
			want: want{name: "x", path: outside, src: FromShell}},
		{label: "NUV_CLUSTER naming nothing is an error, not a fall-through", selected: "a", env: []string{EnvCluster, "nope", "KUBECONFIG", outside},
			want: want{err: "NUV_CLUSTER=nope names no cluster"}},
		{label: "--kubeconfig beats everything", selected: "a", explicit: other, env: []string{EnvCluster, "b", "KUBECONFIG", outside},
			want: want{name: "other", path: other, src: FromFlag}},
		{label: "--kubeconfig invalid", explicit: broken,
			want: want{err: "invalid kubeconfig"}},
		{label: "type file", selected: "c",
			want: want{name: "c", path: c.Path, src: FromProject, typ: TypeEKS, typeFrom: OverridePath(proj, "c")}},
		{label: "type file beats DETECT_FORCE", selected: "c", env: []string{"DETECT_FORCE", "k3s"},
			want: want{name: "c", path: c.Path, src: FromProject, typ: TypeEKS, typeFrom: OverridePath(proj, "c")}},
		{label: "DETECT_FORCE beats remembered", selected: "b", env: []string{"DETECT_FORCE", "k3s"},
			want: want{name: "b", path: b.Path, src: FromProject, typ: TypeK3s, typeFrom: "DETECT_FORCE"}},
		{label: "config detect.force", selected: "a", env: []string{"NUV_HOME", home},
			want: want{name: "a", path: a.Path, src: FromProject, typ: TypeAKS, typeFrom: filepath.Join(home, "config.json") + " (detect.force)"}},
		{label: "DETECT_FORCE applies outside clusters/", env: []string{"KUBECONFIG", outside, "DETECT_FORCE", "gke"},
			want: want{name: "x", path: outside, src: FromKubeconfig, typ: TypeGKE, typeFrom: "DETECT_FORCE"}},
		{label: "KUBE beats the type file", selected: "c", env: []string{EnvType, "kind", "DETECT_FORCE", "k3s"},
			want: want{name: "c", path: c.Path, src: FromProject, typ: TypeKind, typeFrom: EnvType}},
		{label: "KUBE with NUV_CLUSTER (an all-kubes child)", selected: "a", env: []string{EnvCluster, "c", EnvType, "local"},
			want: want{name: "c", path: c.Path, src: FromShell, typ: TypeLocal, typeFrom: EnvType}},
		{label: "KUBE invalid", selected: "a", env: []string{EnvType, "openshift"},
			want: want{err: "KUBE=openshift: unknown cluster type"}},
		{label: "DETECT_FORCE invalid", selected: "a", env: []string{"DETECT_FORCE", "kube"},
			want: want{err: "DETECT_FORCE: unknown cluster type"}},
		{label: "a dangling project selection is an error", selected: "gone",
			want: want{noSelection: true, err: `"gone"`}},
		{label: "a dangling project selection does not matter when KUBECONFIG is explicit", selected: "gone", env: []string{"KUBECONFIG", outside},
			want: want{name: "x", path: outside, src: FromKubeconfig}},
	}
	for _, tc := range cases {
		t.Run(tc.label, func(t *testing.T) {
			if err := Unselect(proj); err != nil {
				t.Fatal(err)
			}
			if tc.selected != "" {
				sel := Cluster{Name: tc.selected, Path: filepath.Join(proj, "clusters", tc.selected+Ext)}
				if err := Select(proj, sel, ""); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Resolve(proj, tc.explicit, envMap(t, tc.env...))
			w := tc.want
			if w.err != "" || w.noSelection {
				if err == nil || !strings.Contains(err.Error(), w.err) {
					t.Fatalf("err = %v, want one containing %q", err, w.err)
				}
				if w.noSelection != errors.Is(err, ErrNoSelection) {
					t.Fatalf("errors.Is(err, ErrNoSelection) = %v, want %v (%v)", !w.noSelection, w.noSelection, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != w.name || got.Kubeconfig != w.path || got.Source != w.src || got.Type != w.typ || got.TypeFrom != w.typeFrom {
				t.Fatalf("Resolve = %+v\nwant name %s path %s source %s type %q from %q", got, w.name, w.path, w.src, w.typ, w.typeFrom)
			}
		})
	}
}

// TestTaskEnvAgreesWithResolve: the environment tasks get names the cluster and type Resolve gives
// a nuv command started in the same shell.
func TestTaskEnvAgreesWithResolve(t *testing.T) {
	proj := threeClusters(t)
	cs, _ := ListEnv(proj, envMap(t))
	if err := Select(proj, cs[0], TypeLocal); err != nil {
		t.Fatal(err)
	}
	for _, env := range [][]string{nil, {EnvType, "kind"}, {EnvCluster, "c"}, {EnvCluster, "c", EnvType, "eks"}} {
		getenv := envMap(t, env...)
		r, err := Resolve(proj, "", getenv)
		if err != nil {
			t.Fatal(err)
		}
		te, err := SelectionEnv(proj, getenv)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"KUBECONFIG=" + r.Kubeconfig, "KUBE=" + r.Type}
		if strings.Join(te, " ") != strings.Join(want, " ") {
			t.Errorf("env %v: task env %v, Resolve %v", env, te, want)
		}
	}
	// Nothing selected: tasks keep the caller's KUBECONFIG, which is what Resolve uses then.
	if err := Unselect(proj); err != nil {
		t.Fatal(err)
	}
	if te, err := SelectionEnv(proj, envMap(t, "KUBECONFIG", cs[1].Path)); te != nil || err != nil {
		t.Errorf("nothing selected: %v %v", te, err)
	}
	if _, err := os.Stat(CurrentPath(proj)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Unselect left %s", CurrentPath(proj))
	}
}
