package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

func threeClusters(t *testing.T) string {
	return project(t, map[string]string{
		"a.kubeconfig": kubeconfigFor("a", "https://127.0.0.1:7001"),
		"b.kubeconfig": kubeconfigFor("b", "https://127.0.0.1:7002"),
		"c.kubeconfig": kubeconfigFor("c", "https://127.0.0.1:7003"),
	})
}

func TestSelectAndSelected(t *testing.T) {
	proj := threeClusters(t)
	env := envMap(t)
	if _, err := Selected(proj, env); !errors.Is(err, ErrNoSelection) || !strings.Contains(err.Error(), "nuv kube use N") {
		t.Fatalf("nothing selected: %v", err)
	}
	cs, _ := ListEnv(proj, env)
	if err := Select(proj, cs[1], TypeEKS); err != nil {
		t.Fatal(err)
	}
	c, err := Selected(proj, env)
	if err != nil || c.Name != "b" || c.Type != TypeEKS || !c.Selected || c.Index != 2 {
		t.Fatalf("Selected = %+v, %v", c, err)
	}
	cs, _ = ListEnv(proj, env)
	for _, c := range cs {
		if c.Selected != (c.Name == "b") {
			t.Errorf("%s selected=%v", c.Name, c.Selected)
		}
	}
	if st, err := os.Stat(CurrentPath(proj)); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("current file: %v %v", st, err)
	}
	// Replacing b's kubeconfig (a recreated cluster) forgets the remembered type.
	writeFile(t, proj, "clusters/b.kubeconfig", kubeconfigFor("b", "https://127.0.0.1:7999"))
	if c, _ := Selected(proj, env); c.Type != "" {
		t.Errorf("type of a replaced kubeconfig = %q, want unknown", c.Type)
	}
	// The selected cluster disappears.
	os.Remove(cs[1].Path)
	if _, err := Selected(proj, env); !errors.Is(err, ErrNoSelection) || !strings.Contains(err.Error(), `"b"`) {
		t.Errorf("selected cluster removed: %v", err)
	}
	// A dangling selection must not let tasks fall back to the caller's cluster.
	te, err := SelectionEnv(proj, env)
	if err == nil || len(te) != 2 || !strings.HasSuffix(te[0], "no-valid-selection") || te[1] != "KUBE=" {
		t.Errorf("SelectionEnv with a dangling selection = %v, %v", te, err)
	}
	te, err = SelectionEnv(proj, envMap(t, EnvCluster, "typo"))
	if err == nil || !strings.HasSuffix(te[0], "no-valid-selection") {
		t.Errorf("SelectionEnv with NUV_CLUSTER=typo = %v, %v", te, err)
	}
	Unselect(proj)
	if te, err := SelectionEnv(proj, env); te != nil || err != nil {
		t.Errorf("nothing selected: %v, %v", te, err)
	}
}

func TestShellSelectionWins(t *testing.T) {
	proj := threeClusters(t)
	cs, _ := ListEnv(proj, envMap(t))
	if err := Select(proj, cs[0], TypeLocal); err != nil {
		t.Fatal(err)
	}
	if err := Remember(proj, "c", cs[2].Path, TypeGKE); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		env, want, typ, err string
	}{
		{"", "a", TypeLocal, ""},
		{"c", "c", TypeGKE, ""},
		{cs[2].Path, "c", TypeGKE, ""},
		{"nope", "", "", "NUV_CLUSTER=nope names no cluster"},
	}
	for _, c := range cases {
		env := envMap(t, EnvCluster, c.env)
		got, err := Selected(proj, env)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("NUV_CLUSTER=%q: err %v", c.env, err)
			}
			continue
		}
		if err != nil || got.Name != c.want || got.Type != c.typ {
			t.Errorf("NUV_CLUSTER=%q: %+v %v", c.env, got, err)
		}
		list, _ := ListEnv(proj, env)
		for _, l := range list {
			if l.Selected != (l.Name == c.want) {
				t.Errorf("NUV_CLUSTER=%q: list marks %s=%v", c.env, l.Name, l.Selected)
			}
		}
		te := TaskEnv(proj, env)
		want := []string{"KUBECONFIG=" + got.Path, "KUBE=" + c.typ}
		if fmt.Sprint(te) != fmt.Sprint(want) {
			t.Errorf("TaskEnv = %v, want %v", te, want)
		}
	}
	// A kubeconfig outside clusters/ given by path.
	outside := writeFile(t, t.TempDir(), "x.kubeconfig", kubeconfigFor("x", "https://127.0.0.1:7100"))
	got, err := Selected(proj, envMap(t, EnvCluster, outside))
	if err != nil || got.Path != outside || got.Server != "https://127.0.0.1:7100" || got.Index != 0 {
		t.Errorf("outside path: %+v %v", got, err)
	}
}

// Two (here: many) concurrent selections leave a complete, valid selection; readers running at the
// same time never see a partial file.
func TestConcurrentSelect(t *testing.T) {
	proj := threeClusters(t)
	env := envMap(t)
	cs, _ := ListEnv(proj, env)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				close(readErr)
				return
			default:
			}
			data, err := os.ReadFile(CurrentPath(proj))
			if err != nil {
				continue // not written yet
			}
			var s Selection
			if err := json.Unmarshal(data, &s); err != nil || s.Name == "" {
				readErr <- fmt.Errorf("partial selection seen: %q", data)
				close(readErr)
				return
			}
		}
	}()
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := cs[i%len(cs)]
			if err := Select(proj, c, TypeLocal); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	close(stop)
	if err := <-readErr; err != nil {
		t.Fatal(err)
	}
	c, err := Selected(proj, env)
	if err != nil || c.Name == "" {
		t.Fatalf("after concurrent selects: %+v %v", c, err)
	}
	entries, _ := os.ReadDir(CurrentPath(proj) + "/..")
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestDamagedSelection(t *testing.T) {
	proj := threeClusters(t)
	writeFile(t, proj, ".nuv/current", "{half")
	_, err := Selected(proj, envMap(t))
	if err == nil || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), CurrentPath(proj)) {
		t.Errorf("damaged selection: %v", err)
	}
	if err := Unselect(proj); err != nil {
		t.Fatal(err)
	}
	if _, err := Selected(proj, envMap(t)); !errors.Is(err, ErrNoSelection) {
		t.Errorf("after Unselect: %v", err)
	}
	if err := Unselect(proj); err != nil {
		t.Errorf("second Unselect: %v", err)
	}
}

func TestSelectInvalidRefused(t *testing.T) {
	proj := project(t, map[string]string{"bad.kubeconfig": "nope: ["})
	cs, _ := ListEnv(proj, envMap(t))
	if err := Select(proj, cs[0], ""); err == nil {
		t.Fatal("selecting an invalid kubeconfig should fail")
	}
	if _, err := os.Stat(CurrentPath(proj)); !os.IsNotExist(err) {
		t.Errorf("selection written for an invalid cluster: %v", err)
	}
}
