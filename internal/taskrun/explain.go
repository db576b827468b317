package taskrun

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template/parse"

	"github.com/go-task/task/v3"
	taskerrors "github.com/go-task/task/v3/errors"
	"github.com/go-task/task/v3/taskfile"
	"github.com/go-task/task/v3/taskfile/ast"
	"go.yaml.in/yaml/v3"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// explained is an error whose message nuv rewrote to name the file, the line and the task; the
// original stays in the chain, so go-task's exit code is kept.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

// explain makes go-task's errors about Taskfiles name what a user needs to fix them:
//
//   - YAML syntax errors as `task: FILE:LINE: MESSAGE`, LINE being where the parser met the fault
//     (go-task's `yaml: line N:` is the line where the enclosing block began);
//   - no Taskfile found: the directory searched and the names looked for (go-task prints the
//     empty entrypoint: `No Taskfile found at ""`);
//   - template errors: the Taskfile, the line and the task whose template is broken (go-task's
//     `template: :1: unclosed action` names neither).
//
// dir is the directory the search started from; e the executor when one was set up (nil before).
func explain(err error, dir string, e *task.Executor, calls []*task.Call) error {
	if err == nil {
		return nil
	}
	var inv *taskerrors.TaskfileInvalidError
	if v := (taskerrors.TaskfileInvalidError{}); errors.As(err, &v) {
		inv = &v
	} else {
		errors.As(err, &inv)
	}
	if inv != nil && inv.Err != nil {
		if m := yamlLine.FindStringSubmatch(inv.Err.Error()); m != nil {
			file := inv.URI
			line, _ := strconv.Atoi(m[1])
			if l := faultLine(file, m[2]); l > 0 {
				line = l
			}
			return &explained{msg: fmt.Sprintf("task: %s:%d: %s (YAML syntax)", filepath.ToSlash(file), line, m[2]), err: err}
		}
		return err
	}
	var nf taskerrors.TaskfileNotFoundError
	if errors.As(err, &nf) && nf.URI == "" {
		where := dir
		if where == "" {
			where, _ = os.Getwd()
		}
		msg := fmt.Sprintf("task: no Taskfile in %s", where)
		if nf.Walk {
			msg += " or any parent directory"
			if nf.OwnerChange {
				msg += " up to where the owner changes"
			}
		}
		msg += " (looked for " + strings.Join(taskfile.DefaultTaskfiles, ", ") + ")"
		if nf.AskInit {
			msg += "; `task --init` creates one"
		}
		return &explained{msg: msg, err: err}
	}
	// A template error comes alone (a task's own) or inside go-task's `Failed to run task "X": `
	// (a dependency's or a called task's): the prefix is kept.
	if i := strings.Index(err.Error(), "template: "); i >= 0 && e != nil {
		msg := err.Error()
		if t, field, ok := brokenTemplate(e, calls, msg[i:]); ok {
			loc := "the Taskfile"
			if t.Location != nil {
				loc = fmt.Sprintf("%s:%d", relPath(t.Location.Taskfile), t.Location.Line)
			}
			prefix := msg[:i]
			if prefix == "" {
				prefix = "task: "
			}
			why := tmplPos.ReplaceAllString(strings.TrimPrefix(msg[i:], "template: "), "")
			return &explained{msg: fmt.Sprintf("%s%s: task %q: %s: template: %s", prefix, loc, t.Task, field, why), err: err}
		}
	}
	return err
}

// tmplPos is the position inside an unnamed template string that text/template puts first.
var tmplPos = lazy.MustCompile(`^:\d+(:\d+)?: `)

var yamlLine = lazy.MustCompile(`^yaml: line (\d+): (.*)$`)

// faultLine is the line of file where a YAML parser stops with message: the first line L such
// that the file's first L lines fail with that same message. The parser reads tokens up to the
// fault and no further on later lines, so the prefix ending at the fault's line fails the same
// way, and a shorter prefix either parses or fails differently (it ends inside a construct).
// 0 when the file cannot be read or no prefix reproduces the message.
func faultLine(file, message string) int {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	var prefix []byte
	for i, l := range lines {
		prefix = append(prefix, l...)
		var n yaml.Node
		err := yaml.Unmarshal(prefix, &n)
		if err == nil {
			continue
		}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil && m[2] == message {
			return i + 1
		}
	}
	return 0
}

func relPath(p string) string {
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(p)
}

// brokenTemplate finds the task, among the called ones and those they run (deps, task: commands),
// with a template that fails to parse, or whose template holds the action an execution error
// names (`executing "" at <ACTION>:`). It returns the task and the field.
func brokenTemplate(e *task.Executor, calls []*task.Call, msg string) (*ast.Task, string, bool) {
	action := ""
	if m := execAt.FindStringSubmatch(msg); m != nil {
		action = m[1]
	}
	seen := map[string]bool{}
	queue := make([]string, 0, len(calls))
	for _, c := range calls {
		queue = append(queue, c.Task)
	}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		t, err := e.GetTask(&task.Call{Task: name})
		if err != nil {
			continue
		}
		for _, f := range templates(t) {
			if !strings.Contains(f.text, "{{") {
				continue
			}
			tree := parse.New("")
			tree.Mode = parse.SkipFuncCheck
			if _, err := tree.Parse(f.text, "", "", map[string]*parse.Tree{}); err != nil {
				return t, f.field, true
			}
			if action != "" && strings.Contains(f.text, action) {
				return t, f.field, true
			}
		}
		for _, d := range t.Deps {
			queue = append(queue, d.Task)
		}
		for _, c := range t.Cmds {
			if c.Task != "" {
				queue = append(queue, c.Task)
			}
		}
	}
	return nil, "", false
}

var execAt = lazy.MustCompile(`executing "[^"]*" at <([^>]*)>`)

type tmplField struct{ field, text string }

// templates lists a task's own template strings with the field they are in.
func templates(t *ast.Task) []tmplField {
	var out []tmplField
	add := func(field, text string) { out = append(out, tmplField{field, text}) }
	vars := func(prefix string, vs *ast.Vars) {
		if vs == nil {
			return
		}
		for k, v := range vs.All() {
			if s, ok := v.Value.(string); ok {
				add(prefix+"."+k, s)
			}
			if v.Sh != nil {
				add(prefix+"."+k+".sh", *v.Sh)
			}
		}
	}
	add("desc", t.Desc)
	add("summary", t.Summary)
	add("label", t.Label)
	add("dir", t.Dir)
	add("if", t.If)
	vars("vars", t.Vars)
	vars("env", t.Env)
	for i, c := range t.Cmds {
		p := fmt.Sprintf("cmds[%d]", i)
		add(p, c.Cmd)
		add(p+".task", c.Task)
		add(p+".if", c.If)
		vars(p+".vars", c.Vars)
	}
	for i, d := range t.Deps {
		add(fmt.Sprintf("deps[%d]", i), d.Task)
		vars(fmt.Sprintf("deps[%d].vars", i), d.Vars)
	}
	for i, p := range t.Preconditions {
		add(fmt.Sprintf("preconditions[%d].sh", i), p.Sh)
		add(fmt.Sprintf("preconditions[%d].msg", i), p.Msg)
	}
	for i, s := range t.Status {
		add(fmt.Sprintf("status[%d]", i), s)
	}
	for i, g := range t.Sources {
		add(fmt.Sprintf("sources[%d]", i), g.Glob)
	}
	for i, g := range t.Generates {
		add(fmt.Sprintf("generates[%d]", i), g.Glob)
	}
	for i, d := range t.Dotenv {
		add(fmt.Sprintf("dotenv[%d]", i), d)
	}
	return out
}
