package addonscmd_test

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

// TestTaskfileVerbs: the repository's tasks/addons.yml, included under addons: as the root
// Taskfile does, turns ONLY, STACK and ALL into `nuv addons` flags (dry run: -n prints the commands).
func TestTaskfileVerbs(t *testing.T) {
	src, err := os.ReadFile("../../../tasks/addons.yml")
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, "tasks"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(project, "tasks", "addons.yml"), src, 0o644)
	os.WriteFile(filepath.Join(project, "Taskfile.yml"), []byte("version: '3'\nincludes:\n  addons:\n    taskfile: ./tasks/addons.yml\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"addons"}, "nuv addons list"},
		{[]string{"addons:plan", "STACK=observability"}, "nuv addons plan  --stack observability"},
		{[]string{"addons:apply", "ONLY=web,crds"}, "nuv addons apply --only web,crds"},
		{[]string{"addons:remove", "ALL=1"}, "nuv addons remove   --all"},
		{[]string{"addons:status"}, "nuv addons status"},
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
}
