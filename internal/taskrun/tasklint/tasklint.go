// Package tasklint checks a Taskfile and the Taskfiles it includes for a variable defined at file
// level by two of them.
//
// go-task merges the file-level `vars:` of every included Taskfile into the root's one scope, and
// the includes are read concurrently: when two Taskfiles define the same variable, which value wins
// varies from run to run (and either value leaks into every other Taskfile's tasks). Defaults that
// belong to a Taskfile's own tasks are written where they are used (`{{.NAME | default "x"}}`) or
// as task-level `vars:`, which stay with their task.
//
// Check reads only YAML: the root, then every `includes:` entry (a path, a directory holding a
// Taskfile, or a map with `taskfile:`), recursively; remote and templated include paths cannot be
// followed and are reported as errors, optional includes that do not exist are skipped.
package tasklint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Definition is one file-level variable definition: the Taskfile and the line of its key.
type Definition struct {
	File string
	Line int
}

func (d Definition) String() string { return fmt.Sprintf("%s:%d", d.File, d.Line) }

// Clash is a file-level variable defined by more than one Taskfile of one root.
type Clash struct {
	Var  string
	Defs []Definition // in the order the Taskfiles were read (root first, includes in file order)
}

func (c Clash) String() string {
	defs := make([]string, len(c.Defs))
	for i, d := range c.Defs {
		defs[i] = d.String()
	}
	return fmt.Sprintf("file-level variable %s is defined by %d Taskfiles included into one scope (%s): go-task merges them and the winner varies between runs; use a task-level var or an inline default",
		c.Var, len(c.Defs), strings.Join(defs, ", "))
}

// taskfileNames are go-task's default Taskfile names, in its search order, plus nuv's bundle name.
var taskfileNames = []string{"Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml",
	"Taskfile.dist.yml", "taskfile.dist.yml", "Taskfile.dist.yaml", "taskfile.dist.yaml", "nuvfile.yml"}

// Check reads the Taskfile root (a file, or a directory holding one) and every Taskfile it
// includes, and returns the file-level variables that more than one of them defines, sorted by
// name. An error means a Taskfile could not be read or parsed (it names the file and line).
func Check(root string) ([]Clash, error) {
	file, err := resolve(root)
	if err != nil {
		return nil, err
	}
	w := &walker{seen: map[string]bool{}, defs: map[string][]Definition{}}
	if err := w.read(file); err != nil {
		return nil, err
	}
	var out []Clash
	for name, defs := range w.defs {
		if len(defs) > 1 {
			out = append(out, Clash{Var: name, Defs: defs})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Var < out[j].Var })
	return out, nil
}

// CheckTree runs Check on every Taskfile (any of go-task's default names, or nuvfile.yml) under
// dir, each as a root: a bundle's folders are separate roots. Findings are keyed by root.
func CheckTree(dir string) (map[string][]Clash, error) {
	out := map[string][]Clash{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		for _, n := range taskfileNames {
			if d.Name() == n {
				clashes, err := Check(p)
				if err != nil {
					return err
				}
				if len(clashes) > 0 {
					out[p] = clashes
				}
			}
		}
		return nil
	})
	return out, err
}

type walker struct {
	seen map[string]bool
	defs map[string][]Definition
}

// taskfile is the part of a Taskfile the check reads.
type taskfile struct {
	Vars     yaml.Node `yaml:"vars"`
	Includes yaml.Node `yaml:"includes"`
}

func (w *walker) read(file string) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	if w.seen[abs] {
		return nil // go-task refuses include cycles itself; a file included twice defines once
	}
	w.seen[abs] = true
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read Taskfile: %w", err)
	}
	var tf taskfile
	if err := yaml.Unmarshal(data, &tf); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if tf.Vars.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(tf.Vars.Content); i += 2 {
			k := tf.Vars.Content[i]
			w.defs[k.Value] = append(w.defs[k.Value], Definition{File: file, Line: k.Line})
		}
	}
	if tf.Includes.Kind != yaml.MappingNode {
		return nil
	}
	dir := filepath.Dir(file)
	for i := 0; i+1 < len(tf.Includes.Content); i += 2 {
		ns, v := tf.Includes.Content[i], tf.Includes.Content[i+1]
		path, optional := v.Value, false
		if v.Kind == yaml.MappingNode {
			var inc struct {
				Taskfile string `yaml:"taskfile"`
				Optional bool   `yaml:"optional"`
			}
			if err := v.Decode(&inc); err != nil {
				return fmt.Errorf("%s:%d: includes.%s: %w", file, v.Line, ns.Value, err)
			}
			path, optional = inc.Taskfile, inc.Optional
		}
		switch {
		case path == "":
			return fmt.Errorf("%s:%d: includes.%s: no taskfile", file, v.Line, ns.Value)
		case strings.Contains(path, "{{"), strings.Contains(path, "://"):
			return fmt.Errorf("%s:%d: includes.%s: %q cannot be checked (templated or remote)", file, v.Line, ns.Value, path)
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		inc, err := resolve(path)
		if errors.Is(err, os.ErrNotExist) && optional {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s:%d: includes.%s: %w", file, v.Line, ns.Value, err)
		}
		if err := w.read(inc); err != nil {
			return err
		}
	}
	return nil
}

// resolve returns p when it is a file, else the first default-named Taskfile in directory p.
func resolve(p string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return p, nil
	}
	for _, n := range taskfileNames {
		if st, err := os.Stat(filepath.Join(p, n)); err == nil && !st.IsDir() {
			return filepath.Join(p, n), nil
		}
	}
	return "", fmt.Errorf("no Taskfile in %s: %w", p, os.ErrNotExist)
}
