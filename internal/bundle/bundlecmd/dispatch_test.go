package bundlecmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/config"
	"github.com/nuv-dev/nuv/internal/dotenv"
	"github.com/nuv-dev/nuv/internal/taskrun"
)

// testSetup runs against testdata/bundle (NUV_ROOT) from testdata/project with a private NUV_HOME.
func testSetup(t *testing.T, home string) (Setup, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	root, _ := filepath.Abs("testdata/bundle")
	project, _ := filepath.Abs("testdata/project")
	vars := map[string]string{"NUV_ROOT": root, "NUV_HOME": home}
	getenv := func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := &cli.Env{Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, Log: cli.Quiet(), Exe: exe, Getenv: getenv, Dir: project}
	return Setup{Env: env, Version: "0.0.0-test", Builtins: map[string]bool{"cluster": true}}, &out, &errb
}

// baseOptions mirrors app.TaskOptions: merged configuration over the process, project .env as defaults.
func baseOptions(t *testing.T, s Setup) taskrun.Options {
	t.Helper()
	cfgEnv, err := s.ConfigEnv()
	if err != nil {
		t.Fatal(err)
	}
	defaults, err := dotenv.Dir(s.Env.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return taskrun.Options{Env: append(cfgEnv, "USER_DIR="+s.Env.Dir), DefaultEnv: defaults}
}

func TestIntegrationDispatchThroughTaskrun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tasks through the embedded go-task")
	}
	home := t.TempDir()
	// the user's configuration wins over the bundle's nuvroot.json defaults
	if err := config.Save(config.Path(home), map[string]any{"registry": "my-registry"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
		code int
	}{
		{"root task by prefix, config and CLI_ARGS", []string{"hel", "a", "b"},
			"word=hi count=2 registry=my-registry\nargs=a b\npwd-is-user-dir=yes\nroot-set=yes tmp-dir=yes\n", 0},
		{"docopt list and count", []string{"net", "pi", "-vv", "--count=5", "h1", "h2"},
			"ping=true count=5 v=2\nhost h1\nhost h2\ncalled task sees count=5 hosts=h1 h2 shell=5\n", 0},
		{"docopt boolean and argument", []string{"net", "trace", "--dry-run", "example.org"},
			"dep sees host=example.org\ntrace=true host=example.org dry=true ping=false\n", 0},
		{"folder .env under the project's .env", []string{"env", "show"},
			"FROM_FOLDER=folder SHARED=from-project\n", 0},
		{"docopt error", []string{"net", "trace"}, "", 2},
		{"failing task keeps its exit code", []string{"fail"}, "", 201},
		{"unknown word", []string{"nett"}, "", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, out, _ := testSetup(t, home)
			err := s.Dispatch(context.Background(), baseOptions(t, s), tc.args)
			if code := cli.ExitCode(err); code != tc.code {
				t.Fatalf("exit code %d (err %v), want %d", code, err, tc.code)
			}
			if tc.code == 0 && out.String() != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", out.String(), tc.want)
			}
		})
	}
}

func TestIntegrationPrereqRunsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tasks through the embedded go-task")
	}
	home := t.TempDir()
	for i, want := range []string{"prereq\nmain\n", "main\n"} {
		s, out, _ := testSetup(t, home)
		opts := baseOptions(t, s)
		opts.Env = append(opts.Env, "NUV_HOME="+home)
		if err := s.Dispatch(context.Background(), opts, []string{"pre", "run"}); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("run %d: output %q, want %q", i+1, out.String(), want)
		}
	}
}
