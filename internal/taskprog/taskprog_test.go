package taskprog

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
)

func TestTaskArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		rest []string
		ok   bool
	}{
		{[]string{"task"}, []string{}, true},
		{[]string{"/usr/local/bin/task", "2"}, []string{"2"}, true},
		{[]string{"task.exe", "--list"}, []string{"--list"}, true},
		{[]string{"nuv-task", "build", "--", "x"}, []string{"build", "--", "x"}, true},
		{[]string{"nuv", "-task", "--version"}, []string{"--version"}, true},
		{[]string{"/opt/nuv/nuv", "--task"}, []string{}, true},
		{[]string{"nuv", "cluster", "list"}, nil, false},
		{[]string{"nuv"}, nil, false},
		{[]string{"datefmt", "-task"}, nil, false},
		{nil, nil, false},
	} {
		rest, ok := TaskArgs(tc.args)
		if ok != tc.ok || ok && !slices.Equal(rest, tc.rest) {
			t.Errorf("TaskArgs(%q) = %q, %v; want %q, %v", tc.args, rest, ok, tc.rest, tc.ok)
		}
	}
}

// TestOptions: every task gets the user's configuration as variables, the project's .env as
// defaults and the configuration's secret names to mask, read the way the full program reads them.
func TestOptions(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	write := func(path, data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(project, "Taskfile.yml"), "version: '3'\n")
	write(filepath.Join(project, ".env"), "FROM_DOTENV=yes\n")
	write(filepath.Join(home, "config.json"), `{"registry": {"host": "r.example"}, "secrets": ["deploy_token"]}`)
	vars := map[string]string{"NUV_HOME": home, "HOME": home}
	env := &cli.Env{Log: cli.Quiet(), Getenv: func(k string) string { return vars[k] }, Dir: project}
	opts, err := Options(env, Setup(env))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(opts.Env, "REGISTRY_HOST=r.example") {
		t.Errorf("Env %q lacks REGISTRY_HOST=r.example from %s", opts.Env, filepath.Join(home, "config.json"))
	}
	if !slices.ContainsFunc(opts.DefaultEnv, func(kv string) bool { return strings.HasPrefix(kv, "FROM_DOTENV=") }) {
		t.Errorf("DefaultEnv %q lacks the project's .env", opts.DefaultEnv)
	}
	if !slices.Contains(opts.SecretKeys, "DEPLOY_TOKEN") {
		t.Errorf("SecretKeys %q lack DEPLOY_TOKEN", opts.SecretKeys)
	}
}
