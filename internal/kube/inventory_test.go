package kube

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestListParsesSortsAndNumbers(t *testing.T) {
	proj := project(t, map[string]string{
		"zeta.kubeconfig":    kubeconfigFor("z", "https://127.0.0.1:7003"),
		"alpha.kubeconfig":   kubeconfigFor("a", "https://127.0.0.1:7001"),
		"mid.kubeconfig":     kubeconfigFor("m", "https://127.0.0.1:7002"),
		"notes.txt":          "ignored",
		".hidden.kubeconfig": kubeconfigFor("h", "https://127.0.0.1:7009"),
		"alpha.type":         "eks\n",
	})
	cs, err := ListEnv(proj, envMap(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ name, ctx, server, typ string }{
		{"alpha", "a", "https://127.0.0.1:7001", "eks"},
		{"mid", "m", "https://127.0.0.1:7002", ""},
		{"zeta", "z", "https://127.0.0.1:7003", ""},
	}
	if len(cs) != len(want) {
		t.Fatalf("got %d clusters, want %d: %+v", len(cs), len(want), cs)
	}
	for i, w := range want {
		c := cs[i]
		if c.Index != i+1 || c.Name != w.name || c.Context != w.ctx || c.Server != w.server || c.Type != w.typ || c.Err != nil || c.Selected {
			t.Errorf("cluster %d = %+v, want %+v", i+1, c, w)
		}
		if c.Path != filepath.Join(proj, "clusters", w.name+".kubeconfig") {
			t.Errorf("path %s", c.Path)
		}
	}
}

func TestListInvalidKubeconfigs(t *testing.T) {
	valid := kubeconfigFor("ok", "https://127.0.0.1:7001")
	cases := []struct {
		name, content, reason string
	}{
		{"yaml", "clusters: [broken", "not a kubeconfig"},
		{"empty", "", "no contexts defined"},
		{"nocurrent", "apiVersion: v1\nkind: Config\ncontexts:\n- {name: a, context: {cluster: c}}\n- {name: b, context: {cluster: c}}\nclusters:\n- {name: c, cluster: {server: \"https://127.0.0.1:1\"}}\n", "no current-context and 2 contexts"},
		{"dangling", strings.Replace(valid, "current-context: ok", "current-context: other", 1), `current-context "other" is not defined`},
		{"nocluster", strings.Replace(valid, "cluster: ok-cluster,", "cluster: gone,", 1), `names cluster "gone"`},
		{"noserver", strings.Replace(valid, `server: "https://127.0.0.1:7001", `, "", 1), "has no server URL"},
		{"nouser", strings.Replace(valid, "user: ok-user}", "user: ghost}", 1), `names user "ghost"`},
		{"badtype", valid, "unknown cluster type"},
	}
	files := map[string]string{"good.kubeconfig": valid, "badtype.type": "openshift-ish"}
	for _, c := range cases {
		files[c.name+".kubeconfig"] = c.content
	}
	proj := project(t, files)
	cs, err := ListEnv(proj, envMap(t))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Cluster{}
	for _, c := range cs {
		byName[c.Name] = c
	}
	if g := byName["good"]; g.Err != nil || g.Server != "https://127.0.0.1:7001" {
		t.Errorf("valid kubeconfig beside invalid ones: %+v", g)
	}
	for _, c := range cases {
		got := byName[c.name]
		if got.Err == nil || !strings.Contains(got.Err.Error(), c.reason) {
			t.Errorf("%s: err = %v, want it to contain %q", c.name, got.Err, c.reason)
			continue
		}
		if strings.Contains(got.Err.Error(), "s3cret") {
			t.Errorf("%s: reason leaks the token: %v", c.name, got.Err)
		}
	}
}

func TestListSingleContextWithoutCurrent(t *testing.T) {
	cfg := strings.Replace(kubeconfigFor("solo", "https://127.0.0.1:7001"), "current-context: solo\n", "", 1)
	cs, err := ListEnv(project(t, map[string]string{"solo.kubeconfig": cfg}), envMap(t))
	if err != nil || len(cs) != 1 || cs[0].Err != nil || cs[0].Context != "solo" {
		t.Fatalf("got %+v, %v", cs, err)
	}
}

func TestListMissingOrEmptyDir(t *testing.T) {
	cs, err := ListEnv(t.TempDir(), envMap(t))
	if err != nil || len(cs) != 0 {
		t.Fatalf("missing clusters/: %v %v", cs, err)
	}
	cs, err = ListEnv(project(t, nil), envMap(t))
	if err != nil || len(cs) != 0 {
		t.Fatalf("empty clusters/: %v %v", cs, err)
	}
}

func TestFind(t *testing.T) {
	cs := []Cluster{{Index: 1, Name: "a"}, {Index: 2, Name: "b"}, {Index: 3, Name: "10"}}
	cases := []struct {
		ref, want, err string
	}{
		{"1", "a", ""},
		{"2", "b", ""},
		{"b", "b", ""},
		{"b.kubeconfig", "b", ""},
		{"0", "", "valid numbers are 1..3"},
		{"4", "", "valid numbers are 1..3"},
		{"-1", "", "valid numbers are 1..3"},
		{"nope", "", `no cluster named "nope"`},
		{"", "", "no cluster given"},
	}
	for _, c := range cases {
		got, err := Find(cs, c.ref)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Find(%q) err = %v, want %q", c.ref, err, c.err)
			}
			continue
		}
		if err != nil || got.Name != c.want {
			t.Errorf("Find(%q) = %q, %v; want %q", c.ref, got.Name, err, c.want)
		}
	}
	if _, err := Find(nil, "1"); err == nil || !strings.Contains(err.Error(), "holds no kubeconfig") {
		t.Errorf("empty inventory: %v", err)
	}
}

func TestServerPasswordRedacted(t *testing.T) {
	cfg := strings.Replace(kubeconfigFor("p", "https://127.0.0.1:7001"), "https://127.0.0.1:7001", "https://admin:pa55word@127.0.0.1:7001", 1)
	cs, err := ListEnv(project(t, map[string]string{"p.kubeconfig": cfg}), envMap(t))
	if err != nil || len(cs) != 1 || cs[0].Err != nil {
		t.Fatal(cs, err)
	}
	if strings.Contains(cs[0].Server, "pa55word") || !strings.Contains(cs[0].Server, "127.0.0.1:7001") {
		t.Errorf("Server = %q", cs[0].Server)
	}
}
