package eks_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/app"
	"github.com/nuv-dev/nuv/internal/cli"
)

// TestTaskfileVerbs: the repository's tasks/eks.yml, included under eks: as the root Taskfile
// does, turns F, TF, NAME and NODES into `nuv cluster` command lines (dry run: -n prints them).
func TestTaskfileVerbs(t *testing.T) {
	src, err := os.ReadFile("../../../tasks/eks.yml")
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, "tasks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "tasks", "eks.yml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "Taskfile.yml"), []byte("version: '3'\nincludes:\n  eks:\n    taskfile: ./tasks/eks.yml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"eks:plan"}, "nuv cluster plan -f 'clusters/specs/eks.yaml'"},
		{[]string{"eks:plan", "F=specs/x.yaml", "TF=tf"}, "nuv cluster plan -f 'specs/x.yaml' --terraform 'tf'"},
		{[]string{"eks:create"}, "nuv cluster apply -f 'clusters/specs/eks.yaml'"},
		{[]string{"eks:create", "NAME=demo"}, "nuv cluster create eks 'demo' --nodes 2"},
		{[]string{"eks:create", "NAME=demo", "NODES=3"}, "nuv cluster create eks 'demo' --nodes 3"},
		{[]string{"eks:delete", "NAME=demo"}, "nuv cluster delete 'demo'"},
	} {
		var out bytes.Buffer
		env := &cli.Env{Streams: cli.Streams{Out: &out, Err: &out}, Log: cli.NewLogger(&out, 0), Getenv: func(k string) string {
			if k == "HOME" || k == "NUV_PROJECT" {
				return project
			}
			return ""
		}, Dir: project, Exe: "nuv"}
		if err := app.RunEnv(context.Background(), env, append([]string{"nuv", "-task", "-n"}, tc.args...)); err != nil {
			t.Fatalf("%v: %v\n%s", tc.args, err, out.String())
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v prints:\n%s\nwant %q", tc.args, out.String(), tc.want)
		}
	}
	var out bytes.Buffer
	env := &cli.Env{Streams: cli.Streams{Out: &out, Err: &out}, Log: cli.NewLogger(&out, 0), Getenv: func(string) string { return "" }, Dir: project, Exe: "nuv"}
	if err := app.RunEnv(context.Background(), env, []string{"nuv", "-task", "-n", "eks:delete"}); err == nil {
		t.Fatalf("eks:delete without NAME ran:\n%s", out.String())
	}
}
