package bundle

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// Bundle is the main bundle plus the installed plugins, whose top-level folders are commands too.
type Bundle struct {
	Main    *Root
	Plugins []*Root
	// Builtins are nuv's own command names; a top-level folder with one of these names is shadowed.
	Builtins map[string]bool
}

// Target is what a command line resolves to.
type Target struct {
	Root *Root
	// Folder is the folder whose nuvfile runs the task (or whose help is shown).
	Folder *Folder
	// Path is the resolved folder words, e.g. ["kube", "watch"].
	Path []string
	// Task is the resolved task name; "" means "show the folder's help" unless Default is set.
	Task string
	// Default runs the nuvfile's default task (a docopt folder given only options).
	Default bool
	// Args are the words after the task.
	Args []string
	// Dirs are the folders walked, from the bundle (or plugin) root to Folder; prerequisites
	// (prereq.yml) of each run before the task.
	Dirs []string
}

// AmbiguousError is a prefix matching more than one folder or task.
type AmbiguousError struct {
	Word       string
	Where      string
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%q is ambiguous in %s: it could be %s", e.Word, e.Where, strings.Join(e.Candidates, ", "))
}

// UnknownError is a word that names no folder or task.
type UnknownError struct {
	Word        string
	Where       string
	Suggestions []string
}

func (e *UnknownError) Error() string {
	msg := fmt.Sprintf("unknown command %q in %s", e.Word, e.Where)
	if len(e.Suggestions) > 0 {
		msg += "; did you mean " + strings.Join(quoteAll(e.Suggestions), " or ") + "?"
	}
	return msg
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

// candidate is one name a word can match at a level.
type candidate struct {
	name   string
	root   *Root  // the bundle the folder belongs to
	folder string // folder directory, "" for a task
	task   string // task name (aliases resolve to it)
}

// Resolve walks args down the bundle: folders are descended, the first task word ends the walk.
func (b *Bundle) Resolve(args []string) (*Target, error) {
	root := b.Main
	folder, err := ReadFolder(root.Dir, false)
	if err != nil {
		return nil, err
	}
	t := &Target{Root: root, Folder: folder, Dirs: []string{root.Dir}}
	top := true
	for i, w := range args {
		if strings.HasPrefix(w, "-") {
			if folder.Usage != "" && !(w == "-h" || w == "--help") {
				t.Default, t.Args = true, args[i:]
			}
			return t, nil
		}
		cands := b.candidates(t.Root, folder, top)
		c, err := match(w, cands, where(t))
		if err != nil {
			if w == "help" {
				return t, nil
			}
			if uerr, ok := err.(*UnknownError); ok {
				if top && b.Builtins[w] && isDir(filepath.Join(folder.Dir, w)) {
					return nil, fmt.Errorf("bundle folder %s is shadowed by nuv's built-in command %q, which always wins", filepath.Join(folder.Dir, w), w)
				}
				// a plain directory without nuvfile.yml is a broken bundle, say so
				if dir := filepath.Join(folder.Dir, w); isDir(dir) && !isFile(filepath.Join(dir, NuvfileName)) && !strings.HasPrefix(w, ".") {
					return nil, fmt.Errorf("bundle folder %s has no %s", dir, NuvfileName)
				}
				// a namespaced task of an included Taskfile: let the interpreter decide
				if strings.Contains(w, ":") && folder.Nuvfile != "" {
					t.Task, t.Args = w, args[i+1:]
					return t, nil
				}
				if top {
					// a mistyped built-in command deserves a suggestion too
					var names []string
					for n := range b.Builtins {
						names = append(names, n)
					}
					uerr.Suggestions = Suggest(w, append(names, uerr.Suggestions...))
				}
				return nil, uerr
			}
			return nil, err
		}
		if c.folder == "" {
			t.Task, t.Args = c.task, args[i+1:]
			return t, nil
		}
		if folder, err = ReadFolder(c.folder, true); err != nil {
			return nil, err
		}
		if c.root != t.Root { // a plugin folder: its own root comes first
			t.Dirs = []string{c.root.Dir}
		}
		t.Root, t.Folder, t.Path, t.Dirs = c.root, folder, append(t.Path, c.name), append(t.Dirs, c.folder)
		top = false
	}
	return t, nil
}

func where(t *Target) string {
	if len(t.Path) == 0 {
		return "the bundle"
	}
	return "nuv " + strings.Join(t.Path, " ")
}

func (b *Bundle) candidates(root *Root, f *Folder, top bool) []candidate {
	var out []candidate
	seen := map[string]bool{}
	add := func(c candidate) {
		if !seen[c.name] {
			seen[c.name] = true
			out = append(out, c)
		}
	}
	for _, s := range f.Subfolders {
		if top && b.Builtins[s] {
			continue // shadowed by a built-in command: never reached through the bundle
		}
		add(candidate{name: s, root: root, folder: filepath.Join(f.Dir, s)})
	}
	for _, t := range f.Tasks {
		add(candidate{name: t.Name, task: t.Name})
		for _, a := range t.Aliases {
			add(candidate{name: a, task: t.Name})
		}
	}
	if top {
		for _, p := range b.Plugins {
			pf, err := ReadFolder(p.Dir, false)
			if err != nil {
				continue // reported by help
			}
			for _, s := range pf.Subfolders {
				if !b.Builtins[s] {
					add(candidate{name: s, root: p, folder: filepath.Join(p.Dir, s)})
				}
			}
		}
	}
	return out
}

// match picks the candidate named w, or the only one w is a prefix of.
func match(w string, cands []candidate, where string) (candidate, error) {
	for _, c := range cands {
		if c.name == w {
			return c, nil
		}
	}
	var hits []candidate
	for _, c := range cands {
		if strings.HasPrefix(c.name, w) {
			hits = append(hits, c)
		}
	}
	// aliases of one task are one candidate
	uniq := map[string]bool{}
	var names []string
	for _, h := range hits {
		key := h.folder + "\x00" + h.task
		if !uniq[key] {
			uniq[key] = true
			names = append(names, h.name)
		}
	}
	switch len(names) {
	case 1:
		return hits[0], nil
	case 0:
		all := make([]string, len(cands))
		for i, c := range cands {
			all[i] = c.name
		}
		return candidate{}, &UnknownError{Word: w, Where: where, Suggestions: Suggest(w, all)}
	}
	sort.Strings(names)
	return candidate{}, &AmbiguousError{Word: w, Where: where, Candidates: names}
}
