package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
)

// TestInterpreterThroughDispatcher runs the interpreter the ways users reach it: `nuv -task`,
// the program name `task`, `nuv -version` and a tool, with the project's .env as defaults.
func TestInterpreterThroughDispatcher(t *testing.T) {
	project := t.TempDir()
	files := map[string]string{
		"Taskfile.yml": "version: '3'\ntasks:\n  default:\n    cmds:\n      - echo \"FROM_DOTENV=$FROM_DOTENV WINNER=$WINNER\"\n      - echo \"login {{.REGISTRY_PASSWORD}}\"\n",
		".env":         "FROM_DOTENV=dotenv\nWINNER=dotenv\nREGISTRY_PASSWORD=pa55word-from-env\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(project, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("WINNER", "process")
	home := t.TempDir()
	exe, _ := os.Executable()
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		env := &cli.Env{
			Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb},
			Log:     cli.Quiet(),
			Exe:     exe,
			Getenv: func(k string) string {
				switch k {
				case "NUV_HOME":
					return home
				case "NUV_ROOT", "NUV_PROJECT":
					return ""
				}
				return os.Getenv(k)
			},
			Dir: project,
		}
		err := RunEnv(context.Background(), env, args)
		return out.String(), errb.String(), cli.ExitCode(err)
	}
	cases := []struct {
		name      string
		args      []string
		code      int
		outHas    []string
		errHas    []string
		errHasNot []string
	}{
		{name: "nuv -task", args: []string{"nuv", "-task"}, outHas: []string{"FROM_DOTENV=dotenv WINNER=process", "login pa55word-from-env"},
			errHas: []string{`echo "login ***"`}, errHasNot: []string{"pa55word"}},
		{name: "task program name", args: []string{"/usr/local/bin/task", "--dry"}, errHas: []string{`echo "login ***"`}, errHasNot: []string{"pa55word"}},
		{name: "task list", args: []string{"task", "--list-all"}, outHas: []string{"* default:"}},
		{name: "unknown task exit code", args: []string{"task", "nope"}, code: 200},
		{name: "version", args: []string{"nuv", "-version"}, outHas: []string{Version + "\n"}},
		{name: "tool", args: []string{"nuv", "-base64", "hi"}, outHas: []string{"aGk=\n"}},
		{name: "tool by link name", args: []string{"/links/validate", "-e", "not-an-email"}, code: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := run(tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
			for _, s := range tc.outHas {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tc.errHas {
				if !strings.Contains(errs, s) {
					t.Errorf("stderr lacks %q:\n%s", s, errs)
				}
			}
			for _, s := range tc.errHasNot {
				if strings.Contains(errs, s) {
					t.Errorf("stderr shows %q:\n%s", s, errs)
				}
			}
		})
	}
}
