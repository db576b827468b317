package addonscmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
)

func TestCommandLine(t *testing.T) {
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, "addons"), 0o755); err != nil {
		t.Fatal(err)
	}
	index := "apiVersion: nuv.dev/v1alpha1\nkind: Addons\nspec:\n  addons:\n  - {name: a, version: '1', source: {path: m}}\n"
	if err := os.WriteFile(filepath.Join(project, "addons", "index.yaml"), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(project, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: nuv.dev/v1alpha1\nkind: Addons\nspec:\n  addons:\n  - name: a\n    colour: red\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"NUV_PROJECT": project, "HOME": project}
	tests := []struct {
		args     []string
		code     int
		out, err string
	}{
		{args: []string{"--help"}, out: "nuv addons list"},
		{args: nil, out: "Selection: --only NAME"},
		{args: []string{"aply"}, code: 2, err: `unknown verb "aply"; did you mean "apply"?`},
		{args: []string{"list", "-o", "json"}, out: `"name": "a"`},
		{args: []string{"list", "-o", "xml"}, code: 2, err: `--output "xml": accepted values: table, wide, json, yaml`},
		{args: []string{"list"}, out: "a                    1"},
		{args: []string{"list", "--index", bad}, code: 1, err: "bad.yaml:6: spec.addons[0].colour: unknown field (valid: name, namespace"},
		{args: []string{"frobnicate"}, code: 2, err: `unknown verb "frobnicate"`},
		{args: []string{"plan", "--all"}, code: 2, err: "unknown flag: --all"},
		{args: []string{"remove"}, code: 2, err: "--only NAME, --stack NAME or --all"},
		{args: []string{"plan", "extra"}, code: 2, err: "unexpected arguments: extra"},
		{args: []string{"apply", "--timeout", "0s"}, code: 2, err: "--timeout 0s: must be positive"},
		{args: []string{"plan"}, code: 1, err: "no cluster selected"},
		{args: []string{"list", "--index", "nope.yaml"}, code: 1, err: "nope.yaml does not exist"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			e := &cli.Env{Streams: cli.Streams{Out: &out, Err: &out}, Getenv: func(k string) string { return env[k] }, Dir: project}
			err := NewCommand().Run(context.Background(), e, tc.args)
			if code := cli.ExitCode(err); code != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s", code, err, tc.code, out.String())
			}
			if tc.out != "" && !strings.Contains(out.String(), tc.out) {
				t.Errorf("output lacks %q:\n%s", tc.out, out.String())
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("error %v lacks %q", err, tc.err)
			}
		})
	}
}
