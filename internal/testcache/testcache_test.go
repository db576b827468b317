package testcache

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestKey(t *testing.T) {
	tc := Toolchain{GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64", CGO: "1", Ldflags: "-w"}
	all := func(exportB string) map[string]*listed {
		return map[string]*listed{
			"p.test": {ImportPath: "p.test", Export: "/c/aa/111-d", Deps: []string{"b", "a", "unsafe"}},
			"a":      {ImportPath: "a", Export: "/c/bb/222-d"},
			"b":      {ImportPath: "b", Export: exportB},
			"unsafe": {ImportPath: "unsafe"},
		}
	}
	base, why := key(tc, all("/c/cc/333-d")["p.test"], all("/c/cc/333-d"))
	if base == "" || why != "" {
		t.Fatalf("key = %q, %q", base, why)
	}
	reordered := all("/c/cc/333-d")
	reordered["p.test"].Deps = []string{"unsafe", "a", "b"}
	otherTC := tc
	otherTC.Ldflags = "-s -w"
	otherGo := tc
	otherGo.GoVersion = "go1.26.9"
	broken := all("")
	broken["b"].Error = &struct{ Err string }{"b.go:3: undefined: x"}
	for _, tt := range []struct {
		name     string
		tc       Toolchain
		all      map[string]*listed
		same     bool
		fallback string
	}{
		{"the same packages in another order", tc, reordered, true, ""},
		{"a dependency compiled to something else", tc, all("/c/cc/444-d"), false, ""},
		{"other link flags", otherTC, all("/c/cc/333-d"), false, ""},
		{"another Go", otherGo, all("/c/cc/333-d"), false, ""},
		{"a dependency that does not compile", tc, broken, false, "b: b.go:3: undefined: x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k, why := key(tt.tc, tt.all["p.test"], tt.all)
			if why != tt.fallback {
				t.Fatalf("fallback %q, want %q", why, tt.fallback)
			}
			if tt.fallback != "" {
				return
			}
			if (k == base) != tt.same {
				t.Fatalf("key %s against %s: same = %v, want %v", k, base, k == base, tt.same)
			}
		})
	}
}

// TestRunModule runs a module of four packages (one passes, one fails, one has no tests, one
// does not compile) twice, and checks the event stream go test -json would write and that the
// second run links nothing.
func TestRunModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and links test binaries")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	files := map[string]string{
		"go.mod":              "module example.com/m\n\ngo 1.22\n",
		"pass/pass.go":        "package pass\n\nfunc Two() int { return 2 }\n",
		"pass/pass_test.go":   "package pass\n\nimport \"testing\"\n\nfunc TestTwo(t *testing.T) {\n\tif Two() != 2 {\n\t\tt.Fatal(\"two\")\n\t}\n}\n",
		"fail/fail_test.go":   "package fail\n\nimport \"testing\"\n\nfunc TestNo(t *testing.T) { t.Fatal(\"no\") }\n",
		"none/none.go":        "package none\n",
		"broken/broken.go":    "package broken\n\nfunc F() int { return undefinedName }\n",
		"broken/b_test.go":    "package broken\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) { F() }\n",
		"pass/testdata/x.txt": "x\n",
	}
	for name, body := range files {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(mod)
	ctx := context.Background()
	tc := Toolchain{GoVersion: "test", Ldflags: "-w"}
	cache := Cache{Dir: t.TempDir(), GoBin: goBin, Ldflags: "-w"}
	runOnce := func() (results map[string]string, output string, linked int, ok bool) {
		pkgs, err := List(ctx, goBin, tc, []string{"./pass", "./..."})
		if err != nil {
			t.Fatal(err)
		}
		if len(pkgs) != 4 || pkgs[0].ImportPath != "example.com/m/pass" {
			t.Fatalf("packages %+v: want 4, ./pass first", pkgs)
		}
		var out bytes.Buffer
		var mu sync.Mutex
		r := &Runner{Cache: cache, Jobs: 2, Timeout: time.Minute, Out: &out, GoTestArgs: []string{"-count=1"},
			Linked: func(Package, time.Duration) { mu.Lock(); linked++; mu.Unlock() }}
		ok = r.Run(ctx, pkgs)
		results = map[string]string{}
		starts := map[string]int{}
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var e event
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("not an event: %q", line)
			}
			if e.Test == "" && e.Action == "start" {
				starts[e.Package]++
			}
			if e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") {
				results[strings.TrimPrefix(e.Package, "example.com/m/")] = e.Action
			}
			if e.Test != "" && (e.Action == "pass" || e.Action == "fail") {
				results[strings.TrimPrefix(e.Package, "example.com/m/")+"."+e.Test] = e.Action
			}
		}
		for p, n := range starts {
			if n != 1 {
				t.Errorf("%d start events of %s, want one", n, p)
			}
		}
		if len(starts) != 4 {
			t.Errorf("start events of %d packages, want 4: %v", len(starts), starts)
		}
		return results, out.String(), linked, ok
	}
	entries := func() int {
		ents, err := os.ReadDir(cache.Dir)
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	want := map[string]string{"pass": "pass", "pass.TestTwo": "pass", "fail": "fail", "fail.TestNo": "fail", "none": "skip", "broken": "fail"}
	for run, wantLinked := range []int{2, 0} {
		results, output, linked, ok := runOnce()
		if ok {
			t.Errorf("run %d: the run passed with a failing package", run)
		}
		for k, v := range want {
			if results[k] != v {
				t.Errorf("run %d: %s: %q, want %q\n%s", run, k, results[k], v, output)
			}
		}
		for _, line := range []string{"ok  \\texample.com/m/pass\\t", "FAIL\\texample.com/m/fail\\t", "?   \\texample.com/m/none\\t[no test files]", "undefinedName"} {
			if !strings.Contains(output, line) {
				t.Errorf("run %d: no %q in the stream:\n%s", run, line, output)
			}
		}
		if linked != wantLinked {
			t.Errorf("run %d: %d test binaries linked, want %d", run, linked, wantLinked)
		}
	}
	if n := entries(); n != 2 {
		t.Fatalf("%d binaries cached, want 2", n)
	}
	// A change to pass's code: its binary is linked again and replaces the old one.
	if err := os.WriteFile(filepath.Join(mod, "pass/pass.go"), []byte("package pass\n\nfunc Two() int { return 1 + 1 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, linked, _ := runOnce(); linked != 1 {
		t.Errorf("after a change to one package: %d test binaries linked, want 1", linked)
	}
	if n := entries(); n != 2 {
		t.Errorf("%d binaries cached after the change, want 2 (the old binary of pass removed)", n)
	}
}

func TestPrune(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		name     string
		ages     map[string]time.Duration // entry -> time since its last use (each holds 1000 bytes)
		maxBytes int64
		left     []string
	}{
		{"unused for three days", map[string]time.Duration{"old": 72 * time.Hour, "fresh": 0}, 1 << 30, []string{"fresh"}},
		{"over the size cap: least recently used first", map[string]time.Duration{"a": 3 * time.Hour, "b": 2 * time.Hour, "c": time.Hour}, 2000, []string{"b", "c"}},
		{"within both", map[string]time.Duration{"a": time.Hour, "b": 0}, 2000, []string{"a", "b"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := Cache{Dir: t.TempDir()}
			for name, age := range tt.ages {
				d := filepath.Join(c.Dir, name)
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, "p.test"), make([]byte, 1000), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(d, now.Add(-age), now.Add(-age)); err != nil {
					t.Fatal(err)
				}
			}
			freed, err := c.Prune(48*time.Hour, tt.maxBytes)
			if err != nil {
				t.Fatal(err)
			}
			ents, _ := os.ReadDir(c.Dir)
			var left []string
			for _, e := range ents {
				left = append(left, e.Name())
			}
			if strings.Join(left, ",") != strings.Join(tt.left, ",") {
				t.Errorf("left %v, want %v", left, tt.left)
			}
			if want := int64(1000 * (len(tt.ages) - len(tt.left))); freed != want {
				t.Errorf("freed %d bytes, want %d", freed, want)
			}
		})
	}
}
