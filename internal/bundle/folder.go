package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/nuv-dev/nuv/internal/yamlerr"
)

// Task is one task of a nuvfile, as help lists it.
type Task struct {
	Name    string
	Desc    string
	Aliases []string
}

// Folder is one bundle folder: its tasks in the nuvfile's order, its sub-folders and its usage.
type Folder struct {
	Dir string
	// Nuvfile is the folder's nuvfile.yml path ("" when the folder has none, e.g. a bare root).
	Nuvfile string
	Tasks   []Task
	// Subfolders are the names of sub-directories holding a nuvfile.yml, sorted.
	Subfolders []string
	// Usage is the docopt text (nuvopts.txt or docopts.md), UsageFile its path; empty when absent.
	Usage     string
	UsageFile string
}

// ReadFolder reads dir's nuvfile.yml, usage and sub-folders. requireNuvfile makes a missing
// nuvfile.yml an error (every folder but a bundle root needs one). Malformed YAML is an error with
// the file and line.
func ReadFolder(dir string, requireNuvfile bool) (*Folder, error) {
	f := &Folder{Dir: dir}
	nf := filepath.Join(dir, NuvfileName)
	data, err := os.ReadFile(nf)
	switch {
	case err == nil:
		f.Nuvfile = nf
		if f.Tasks, err = parseTasks(nf, data); err != nil {
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist):
		if requireNuvfile {
			return nil, fmt.Errorf("bundle folder %s has no %s", dir, NuvfileName)
		}
	default:
		return nil, fmt.Errorf("read %s: %w", nf, err)
	}
	for _, name := range []string{OptsName, DocoptsName} {
		p := filepath.Join(dir, name)
		if b, err := os.ReadFile(p); err == nil {
			f.Usage, f.UsageFile = string(b), p
			break
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read bundle folder %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && isFile(filepath.Join(dir, e.Name(), NuvfileName)) {
			f.Subfolders = append(f.Subfolders, e.Name())
		}
	}
	sort.Strings(f.Subfolders)
	return f, nil
}

// HasTask reports whether name is a task (or an alias of one) of the folder.
func (f *Folder) HasTask(name string) (string, bool) {
	for _, t := range f.Tasks {
		if t.Name == name {
			return t.Name, true
		}
		for _, a := range t.Aliases {
			if a == name {
				return t.Name, true
			}
		}
	}
	return "", false
}

// parseTasks lists the public tasks of a Taskfile in file order.
func parseTasks(path string, data []byte) ([]Task, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		// yamlerr puts the fault at its line (yaml.v3 prints some one line too early)
		var ye *yamlerr.Errors
		if errors.As(yamlerr.FromDecode(path, data, err), &ye) && len(ye.List) > 0 {
			p := ye.List[0]
			p.Msg = "invalid YAML: " + p.Msg
			return nil, errors.New(p.String(path))
		}
		return nil, fmt.Errorf("%s: invalid YAML: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: a nuvfile must be a YAML mapping (a Taskfile)", path, top.Line)
	}
	tasks := valueOf(top, "tasks")
	if tasks == nil {
		return nil, nil
	}
	if tasks.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: \"tasks\" must be a mapping of task names", path, tasks.Line)
	}
	var out []Task
	for i := 0; i+1 < len(tasks.Content); i += 2 {
		name, body := tasks.Content[i].Value, tasks.Content[i+1]
		t := Task{Name: name}
		if body.Kind == yaml.MappingNode {
			if v := valueOf(body, "internal"); v != nil {
				if b, _ := strconv.ParseBool(v.Value); b {
					continue
				}
			}
			if v := valueOf(body, "desc"); v != nil {
				t.Desc = strings.TrimSpace(v.Value)
			} else if v := valueOf(body, "summary"); v != nil {
				t.Desc, _, _ = strings.Cut(strings.TrimSpace(v.Value), "\n")
			}
			if v := valueOf(body, "aliases"); v != nil && v.Kind == yaml.SequenceNode {
				for _, a := range v.Content {
					t.Aliases = append(t.Aliases, a.Value)
				}
			}
		}
		out = append(out, t)
	}
	return out, nil
}

func valueOf(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
