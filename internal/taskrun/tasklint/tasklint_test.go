package tasklint_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/taskrun/tasklint"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  []string // "VAR file:line, file:line"
		err   string
	}{
		{name: "two includes define NAME (the bug of tasks/local.yml and tasks/kind.yml)", files: map[string]string{
			"Taskfile.yml":    "version: '3'\nincludes:\n  local: ./tasks/local.yml\n  kind:\n    taskfile: ./tasks/kind.yml\n",
			"tasks/local.yml": "version: '3'\nvars:\n  NAME: '{{.NAME | default \"local\"}}'\ntasks: {}\n",
			"tasks/kind.yml":  "version: '3'\n\nvars:\n  NAME: '{{.NAME | default \"kind\"}}'\n",
		}, want: []string{"NAME tasks/local.yml:3, tasks/kind.yml:4"}},
		{name: "task-level and inline defaults are fine", files: map[string]string{
			"Taskfile.yml": "version: '3'\nincludes:\n  a: ./a.yml\n  b: ./b.yml\n",
			"a.yml":        "version: '3'\ntasks:\n  x:\n    vars:\n      NAME: a\n    cmds: ['echo {{.NAME}}']\n",
			"b.yml":        "version: '3'\ntasks:\n  x:\n    vars:\n      NAME: b\n    cmds: ['echo {{.NAME | default \"b\"}}']\n",
		}},
		{name: "distinct names do not clash", files: map[string]string{
			"Taskfile.yml": "version: '3'\nvars:\n  ROOT: r\nincludes:\n  a: ./a.yml\n",
			"a.yml":        "version: '3'\nvars:\n  A_ONLY: a\n",
		}},
		{name: "the root and a nested include through a directory", files: map[string]string{
			"Taskfile.yml":     "version: '3'\nvars:\n  F: root\nincludes:\n  a: ./a.yml\n",
			"a.yml":            "version: '3'\nincludes:\n  sub: ./sub\n",
			"sub/Taskfile.yml": "version: '3'\nvars:\n  F: sub\n  G: 1\n",
		}, want: []string{"F Taskfile.yml:3, sub/Taskfile.yml:3"}},
		{name: "a file included twice defines once", files: map[string]string{
			"Taskfile.yml": "version: '3'\nincludes:\n  a: ./a.yml\n  b: ./a.yml\n",
			"a.yml":        "version: '3'\nvars:\n  A: 1\n",
		}},
		{name: "a missing optional include is skipped", files: map[string]string{
			"Taskfile.yml": "version: '3'\nincludes:\n  a:\n    taskfile: ./nothere.yml\n    optional: true\n",
		}},
		{name: "a missing include names the including file and line", files: map[string]string{
			"Taskfile.yml": "version: '3'\nincludes:\n  a:\n    taskfile: ./nothere.yml\n",
		}, err: "Taskfile.yml:4: includes.a: stat"},
		{name: "a templated include cannot be checked", files: map[string]string{
			"Taskfile.yml": "version: '3'\nincludes:\n  a: ./{{.OS}}.yml\n",
		}, err: `Taskfile.yml:3: includes.a: "./{{.OS}}.yml" cannot be checked (templated or remote)`},
		{name: "broken YAML names the file", files: map[string]string{
			"Taskfile.yml": "version: '3'\nincludes:\n  a: ./a.yml\n",
			"a.yml":        "version: '3'\nvars: [\n",
		}, err: "a.yml: yaml:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, tc.files)
			clashes, err := tasklint.Check(filepath.Join(dir, "Taskfile.yml"))
			if tc.err != "" {
				if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), ""), tc.err) {
					t.Fatalf("err %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range clashes {
				s := c.Var
				for i, d := range c.Defs {
					rel, _ := filepath.Rel(dir, d.File)
					sep := ", "
					if i == 0 {
						sep = " "
					}
					s += sep + filepath.ToSlash(rel) + ":" + strconv.Itoa(d.Line)
				}
				got = append(got, s)
				if !strings.Contains(c.String(), "winner varies between runs") {
					t.Errorf("message %q does not say why", c.String())
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("clashes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestRepositoryTaskfiles is the linter on what nuv ships: the repository's Taskfile.yml with
// tasks/*.yml, and every nuvfile.yml of the embedded bundle (olaris/), each a root.
func TestRepositoryTaskfiles(t *testing.T) {
	clashes, err := tasklint.Check("../../../Taskfile.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clashes {
		t.Errorf("Taskfile.yml: %s", c)
	}
	tree, err := tasklint.CheckTree("../../../olaris")
	if err != nil {
		t.Fatal(err)
	}
	for root, cs := range tree {
		for _, c := range cs {
			t.Errorf("%s: %s", root, c)
		}
	}
}

// TestRepositoryTaskfilesWithTheOldDefaults: the repository's Taskfiles with the file-level NAME
// of tasks/local.yml and tasks/kind.yml they once had are refused.
func TestRepositoryTaskfilesWithTheOldDefaults(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for _, p := range append([]string{"Taskfile.yml"}, glob(t, "../../../tasks/*.yml")...) {
		b, err := os.ReadFile(filepath.Join("../../..", p))
		if err != nil {
			t.Fatal(err)
		}
		files[p] = string(b)
	}
	for file, def := range map[string]string{"tasks/local.yml": "local", "tasks/kind.yml": "kind"} {
		files[file] = strings.Replace(files[file], "\ntasks:\n", "\nvars:\n  NAME: '{{.NAME | default \""+def+"\"}}'\n\ntasks:\n", 1)
	}
	write(t, dir, files)
	clashes, err := tasklint.Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(clashes) != 1 || clashes[0].Var != "NAME" || len(clashes[0].Defs) != 2 {
		t.Errorf("clashes %v, want NAME defined twice", clashes)
	}
}

func glob(t *testing.T, pattern string) []string {
	t.Helper()
	ms, err := filepath.Glob(pattern)
	if err != nil || len(ms) == 0 {
		t.Fatalf("glob %s: %v %v", pattern, ms, err)
	}
	for i, m := range ms {
		ms[i], _ = filepath.Rel("../../..", m)
	}
	return ms
}
