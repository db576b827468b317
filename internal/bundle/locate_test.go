package bundle

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLocateOrder(t *testing.T) {
	base := t.TempDir()
	envRoot := filepath.Join(base, "envroot")
	write(t, filepath.Join(envRoot, NuvrootName), `{"version":"env"}`)
	parent := filepath.Join(base, "proj", "mybundle")
	write(t, filepath.Join(parent, NuvrootName), `{"version":"parent"}`)
	deep := filepath.Join(parent, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(base, "work")
	write(t, filepath.Join(work, "olaris", NuvrootName), `{"version":"local"}`)
	home := filepath.Join(base, "home")
	write(t, filepath.Join(HomeDir(home, "1.2.3"), NuvrootName), `{"version":"home"}`)
	emb := fstest.MapFS{
		NuvrootName:              {Data: []byte(`{"version":"embedded","config":{"a":{"b":1}}}`)},
		"x/" + NuvfileName:       {Data: []byte("version: '3'\ntasks:\n  t: echo t\n")},
		"x/scripts/run.sh":       {Data: []byte("#!/bin/sh\necho hi\n")},
		"y/" + OptsName:          {Data: []byte("Usage:\n  y t\n")},
		"y/" + NuvfileName:       {Data: []byte("version: '3'\n")},
		"nested/deeper/file.txt": {Data: []byte("data")},
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name    string
		o       LocateOptions
		version string
		source  Source
	}{
		{"NUV_ROOT wins", LocateOptions{Getenv: env(map[string]string{"NUV_ROOT": envRoot}), Dir: deep, Home: home, Version: "1.2.3", Embedded: emb}, "env", FromEnv},
		{"walk up to nuvroot.json", LocateOptions{Getenv: env(nil), Dir: deep, Home: home, Version: "1.2.3", Embedded: emb}, "parent", FromParent},
		{"./olaris", LocateOptions{Getenv: env(nil), Dir: work, Home: home, Version: "1.2.3", Embedded: emb}, "local", FromLocal},
		{"downloaded", LocateOptions{Getenv: env(nil), Dir: home, Home: home, Version: "1.2.3", Embedded: emb}, "home", FromHome},
		{"embedded", LocateOptions{Getenv: env(nil), Dir: home, Home: home, Version: "9.9.9", Embedded: emb}, "embedded", FromEmbedded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Locate(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if r.Version != tc.version || r.Source != tc.source {
				t.Errorf("found %s (%s, version %q), want version %q from %s", r.Dir, r.Source, r.Version, tc.version, tc.source)
			}
		})
	}

	// the embedded bundle is extracted once, completely, and reused
	r1, err := Locate(tests[4].o)
	if err != nil {
		t.Fatal(err)
	}
	for p, f := range emb {
		got, err := os.ReadFile(filepath.Join(r1.Dir, filepath.FromSlash(p)))
		if err != nil || string(got) != string(f.Data) {
			t.Errorf("extracted %s = %q, %v", p, got, err)
		}
	}
	if st, _ := os.Stat(filepath.Join(r1.Dir, "x/scripts/run.sh")); st == nil || st.Mode().Perm()&0o100 == 0 {
		t.Error("extracted script is not executable")
	}
	if r1.Config["a"].(map[string]any)["b"] == nil {
		t.Errorf("embedded config = %v", r1.Config)
	}
	entries, _ := os.ReadDir(filepath.Dir(r1.Dir))
	if len(entries) != 1 {
		t.Errorf("cache holds %d entries after two extractions, want 1", len(entries))
	}

	// bad NUV_ROOT
	_, err = Locate(LocateOptions{Getenv: env(map[string]string{"NUV_ROOT": filepath.Join(base, "nope")}), Dir: work})
	if err == nil || !strings.Contains(err.Error(), "NUV_ROOT=") {
		t.Errorf("missing NUV_ROOT: err = %v", err)
	}
	// nothing at all
	_, err = Locate(LocateOptions{Getenv: env(nil), Dir: home})
	if err == nil || !strings.Contains(err.Error(), "nuv -update") {
		t.Errorf("no bundle: err = %v", err)
	}
}

func TestExtractUnwritableCache(t *testing.T) {
	base := t.TempDir()
	blocker := filepath.Join(base, "file")
	write(t, blocker, "")
	_, err := Extract(fstest.MapFS{"a": {Data: []byte("x")}}, filepath.Join(blocker, "cache"))
	if err == nil || !strings.Contains(err.Error(), blocker) {
		t.Errorf("err = %v, want one naming %s", err, blocker)
	}
}

func TestLoadRootMalformed(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, NuvrootName), "{\n  \"version\": \"1\",\n  \"config\": {\"a\": }\n}\n")
	_, err := LoadRoot(dir, FromEnv)
	want := filepath.Join(dir, NuvrootName) + ":3:"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to contain %q", err, want)
	}
	write(t, filepath.Join(dir, NuvrootName), `{"config": "nope"}`)
	if _, err := LoadRoot(dir, FromEnv); err == nil || !strings.Contains(err.Error(), "must be a JSON object") {
		t.Errorf("config not an object: err = %v", err)
	}
}

func TestTasksListing(t *testing.T) {
	b := testBundle(t)
	// the malformed folder makes the listing fail with its path and line
	if _, err := b.Tasks(); err == nil || !strings.Contains(err.Error(), "badyaml/nuvfile.yml:5: invalid YAML: did not find expected ',' or ']' (the list opened at line 4 is not closed)") {
		t.Fatalf("Tasks() err = %v", err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, NuvrootName), "{}")
	write(t, filepath.Join(dir, NuvfileName), "version: '3'\ntasks:\n  b: {desc: B}\n  a: echo a\n")
	write(t, filepath.Join(dir, "sub", NuvfileName), "version: '3'\ntasks:\n  z: {desc: Z}\n")
	root, _ := LoadRoot(dir, FromEnv)
	got, err := (&Bundle{Main: root, Plugins: b.Plugins, Builtins: b.Builtins}).Tasks()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range got {
		lines = append(lines, fmt.Sprintf("%s|%s|%s|%v", l.Command, l.Desc, l.Plugin, l.Shadowed))
	}
	want := "nuv b|B||false,nuv a|||false,nuv sub z|Z||false,nuv cluster x||olaris-extra|true,nuv greet world|Greet the world from a plugin|olaris-extra|false,nuv net other||olaris-extra|false"
	if strings.Join(lines, ",") != want {
		t.Errorf("Tasks() = %s\nwant      %s", strings.Join(lines, ","), want)
	}
}

func TestLocateEmbeddedWithoutExtracting(t *testing.T) {
	home := t.TempDir()
	emb := fstest.MapFS{NuvrootName: {Data: []byte(`{"version":"e","config":{"k":"v"}}`)}}
	r, err := Locate(LocateOptions{Getenv: func(string) string { return "" }, Dir: home, Home: home, Version: "x", Embedded: emb, NoExtract: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Dir != "" || r.Source != FromEmbedded || r.Config["k"] != "v" {
		t.Errorf("root = %+v", r)
	}
	if _, err := os.Stat(filepath.Join(home, "cache")); !os.IsNotExist(err) {
		t.Error("NoExtract extracted the bundle")
	}
	bad := fstest.MapFS{NuvrootName: {Data: []byte("{\n\"config\": 1,,\n}")}}
	if _, err := LoadRootFS(bad); err == nil || !strings.Contains(err.Error(), "embedded nuvroot.json:2:") {
		t.Errorf("malformed embedded nuvroot.json: err = %v", err)
	}
}

func TestExtractConcurrently(t *testing.T) {
	emb := fstest.MapFS{NuvrootName: {Data: []byte(`{"version":"c"}`)}, "a/" + NuvfileName: {Data: []byte("version: '3'\n")}}
	cache := filepath.Join(t.TempDir(), "cache")
	dirs := make(chan string, 8)
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			d, err := Extract(emb, cache)
			dirs <- d
			errs <- err
		}()
	}
	first := ""
	for i := 0; i < 8; i++ {
		d, err := <-dirs, <-errs
		if err != nil {
			t.Fatal(err)
		}
		if first == "" {
			first = d
		} else if d != first {
			t.Errorf("concurrent extractions gave %s and %s", first, d)
		}
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 {
		t.Errorf("cache holds %d entries, want 1 (no temporary leftovers)", len(entries))
	}
	if _, err := os.Stat(filepath.Join(first, "a", NuvfileName)); err != nil {
		t.Error(err)
	}
}
