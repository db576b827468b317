package taskrun_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/taskrun"
)

// TestTaskfileErrors: what `nuv -task` says about broken Taskfiles names the file, the line of the
// fault and the task, with go-task's exit codes.
func TestTaskfileErrors(t *testing.T) {
	cases := []struct {
		name    string
		fixture string
		args    []string
		code    int
		stderr  string
	}{
		{name: "YAML syntax: the line of the fault, not of the enclosing block", fixture: "badyaml", code: 109,
			stderr: "nuv: task: $DIR/Taskfile.yml:6: did not find expected key (YAML syntax)\n"},
		{name: "YAML syntax: an unclosed flow sequence", fixture: "errors/yamlflow", code: 109,
			stderr: "nuv: task: $DIR/Taskfile.yml:8: did not find expected ',' or ']' (YAML syntax)\n"},
		{name: "YAML syntax in an included Taskfile names that file", fixture: "errors/yamltab", args: []string{"inc:hello"}, code: 109,
			stderr: "nuv: task: $DIR/tasks/inc.yml:6: found a tab character that violates indentation (YAML syntax)\n"},
		{name: "template parse error names the Taskfile and the task", fixture: "errors/tmpl", args: []string{"broken"}, code: 1,
			stderr: "nuv: task: $DIR/Taskfile.yml:9: task \"broken\": cmds[0]: template: unclosed action\n"},
		{name: "template execution error in a dependency names its Taskfile and task", fixture: "errors/tmpl", args: []string{"calls-broken"}, code: 201,
			stderr: "nuv: task: Failed to run task \"calls-broken\": $DIR/tasks/inc.yml:5: task \"inc:index\": cmds[0]: template: executing \"\" at <index .LIST 3>: error calling index: index of untyped nil\n"},
		{name: "no Taskfile says where nuv looked", fixture: "errors/empty", code: 100,
			stderr: "nuv: task: no Taskfile in $DIR or any parent directory (looked for Taskfile.yml, taskfile.yml, Taskfile.yaml, taskfile.yaml, Taskfile.dist.yml, taskfile.dist.yml, Taskfile.dist.yaml, taskfile.dist.yaml); `task --init` creates one\n"},
		{name: "a missing -t file keeps go-task's message", fixture: "errors/empty", args: []string{"-t", "missing.yml"}, code: 100,
			stderr: "nuv: task: No Taskfile found at \"$DIR/missing.yml\" Run `task --init` to create a new Taskfile.\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.fixture)
			var out, errb bytes.Buffer
			err := taskrun.Main(context.Background(), h.env(&out, &errb), tc.args, h.opts)
			if err != nil {
				errb.WriteString("nuv: " + err.Error() + "\n")
			}
			if got := cli.ExitCode(err); got != tc.code {
				t.Errorf("exit %d, want %d", got, tc.code)
			}
			if got := h.clean(errb.String()); got != tc.stderr {
				t.Errorf("stderr\n%q\nwant\n%q", got, tc.stderr)
			}
			if strings.Contains(out.String(), "ok") {
				t.Errorf("a task ran: %q", out.String())
			}
		})
	}
}
