package bundle

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// recorder is the Runner of these tests: it renders each request so golden files show exactly what
// the interpreter would be asked to run.
type recorder struct {
	root string
	out  *bytes.Buffer
}

func (r recorder) Run(_ context.Context, req Request) error {
	rel, _ := filepath.Rel(r.root, req.Dir)
	kind := "RUN"
	if req.Prereq {
		kind = "PREREQ"
	}
	fmt.Fprintf(r.out, "%s dir=%s nuvfile=%s task=%q\n", kind, filepath.ToSlash(rel), filepath.Base(req.Nuvfile), req.Task)
	keys := make([]string, 0, len(req.Vars))
	for k := range req.Vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(r.out, "  var %s=%#v\n", k, req.Vars[k])
	}
	if len(req.CLIArgs) > 0 {
		fmt.Fprintf(r.out, "  CLI_ARGS=%q\n", req.CLIArgs)
	}
	return nil
}

func testBundle(t *testing.T) *Bundle {
	t.Helper()
	main, err := LoadRoot("testdata/bundle", FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	plugins, err := Plugins("testdata/plugin")
	if err != nil {
		t.Fatal(err)
	}
	return &Bundle{Main: main, Plugins: plugins, Builtins: map[string]bool{"cluster": true}}
}

func TestDispatchGolden(t *testing.T) {
	b := testBundle(t)
	tests := []struct {
		name string
		args []string
	}{
		{"root-help", nil},
		{"root-task", []string{"hello"}},
		{"root-task-prefix", []string{"hel", "a", "b"}},
		{"folder-help", []string{"kube"}},
		{"folder-help-word", []string{"kube", "help"}},
		{"nested-prefix", []string{"ku", "no", "l"}},
		{"task-cli-args", []string{"kube", "watch", "-n", "default", "--", "x"}},
		{"alias", []string{"kube", "w"}},
		{"ambiguous-task", []string{"kube", "wa"}},
		{"ambiguous-top", []string{"ne"}},
		{"did-you-mean", []string{"kube", "stauts"}},
		{"unknown-no-suggestion", []string{"zzzzzz"}},
		{"folder-without-nuvfile", []string{"broken", "x"}},
		{"malformed-nuvfile", []string{"badyaml", "a"}},
		{"shadowed-folder", []string{"cluster"}},
		{"did-you-mean-builtin", []string{"clustr"}},
		{"plugin-folder", []string{"greet", "world"}},
		{"plugin-prefix", []string{"gr"}},
		{"prereq-root-and-folder", []string{"kube", "nodes", "list"}},
		{"prereq-docopt-error-skips-them", []string{"net", "trace"}},
		{"docopt-help", []string{"net"}},
		{"docopt-vars", []string{"net", "ping", "--count=5", "-vv", "h1", "h2"}},
		{"docopt-prefix", []string{"net", "tr", "--dry-run", "h"}},
		{"docopt-error", []string{"net", "trace"}},
		{"docopt-unknown-option", []string{"net", "show", "--nope"}},
		{"docopt-dash-h", []string{"net", "show", "-h"}},
		{"docopt-markdown", []string{"docs", "deploy", "prod"}},
		{"docopt-default-task", []string{"docs", "--list"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			rec := recorder{root: b.Main.Dir, out: &out}
			err := b.Dispatch(context.Background(), &out, rec, tc.args)
			got := out.String()
			if err != nil {
				got += "ERROR: " + err.Error() + "\n"
			}
			if len(tc.args) == 0 {
				var help bytes.Buffer
				shadowed, err := b.Help(&help)
				if err != nil {
					t.Fatal(err)
				}
				got = help.String() + fmt.Sprintf("shadowed: %v\n", shadowed) + "--- dispatch:\n" + got
			}
			got = strings.ReplaceAll(got, b.Main.Dir, "<bundle>")
			golden(t, filepath.Join("testdata", "golden", tc.name+".txt"), got)
		})
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n--- got\n%s--- want\n%s", path, got, want)
	}
}
