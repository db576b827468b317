package bundle

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// FolderHelp prints a folder's help: its docopt text when it has one, else its tasks with their
// descriptions in the nuvfile's order and its sub-folders.
func FolderHelp(w io.Writer, t *Target) error {
	f := t.Folder
	if f.Usage != "" {
		fmt.Fprintln(w, strings.TrimRight(f.Usage, "\n"))
		return nil
	}
	name := "nuv"
	if len(t.Path) > 0 {
		name += " " + strings.Join(t.Path, " ")
	}
	writeTasks(w, name, f, nil, nil)
	return nil
}

func writeTasks(w io.Writer, name string, f *Folder, extra [][2]string, shadowed map[string]bool) {
	width := 8
	for _, tk := range f.Tasks {
		width = max(width, len(tk.Name))
	}
	for _, s := range f.Subfolders {
		width = max(width, len(s))
	}
	for _, e := range extra {
		width = max(width, len(e[0]))
	}
	if len(f.Tasks) > 0 {
		fmt.Fprintf(w, "Tasks (%s <task>):\n", name)
		for _, tk := range f.Tasks {
			line := fmt.Sprintf("  %-*s  %s", width, tk.Name, tk.Desc)
			if len(tk.Aliases) > 0 {
				line += fmt.Sprintf(" (aliases: %s)", strings.Join(tk.Aliases, ", "))
			}
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
	if len(f.Subfolders)+len(extra) > 0 {
		if len(f.Tasks) > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "Folders (%s <folder> ...):\n", name)
		for _, s := range f.Subfolders {
			note := folderNote(f.Dir, s)
			if shadowed[s] {
				note = "(shadowed by the built-in command " + s + ")"
			}
			fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-*s  %s", width, s, note), " "))
		}
		for _, e := range extra {
			fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-*s  %s", width, e[0], e[1]), " "))
		}
	}
	if len(f.Tasks)+len(f.Subfolders)+len(extra) == 0 {
		fmt.Fprintf(w, "%s: no tasks\n", name)
	}
}

// folderNote is the first line of a sub-folder's usage text, else the names of its tasks.
func folderNote(dir, sub string) string {
	f, err := ReadFolder(dir+"/"+sub, true)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	if f.Usage != "" {
		for _, l := range strings.Split(f.Usage, "\n") {
			l = strings.TrimSpace(strings.TrimLeft(l, "#"))
			if l != "" && !strings.HasPrefix(strings.ToLower(l), "usage:") && !strings.HasPrefix(l, "```") {
				return l
			}
		}
	}
	if len(f.Tasks) > 0 {
		names := make([]string, 0, len(f.Tasks))
		for _, t := range f.Tasks {
			names = append(names, t.Name)
		}
		return "tasks: " + strings.Join(names, ", ")
	}
	return ""
}

// Help prints the bundle's top level for `nuv` with no arguments: root tasks, folders, plugin
// folders. It returns the shadowed folder names so the caller can warn about them.
func (b *Bundle) Help(w io.Writer) ([]string, error) {
	f, err := ReadFolder(b.Main.Dir, false)
	if err != nil {
		return nil, err
	}
	shadowed := map[string]bool{}
	var names []string
	for _, s := range f.Subfolders {
		if b.Builtins[s] {
			shadowed[s] = true
			names = append(names, s)
		}
	}
	var extra [][2]string
	for _, p := range b.Plugins {
		pf, err := ReadFolder(p.Dir, false)
		if err != nil {
			extra = append(extra, [2]string{p.Name, fmt.Sprintf("(plugin: %v)", err)})
			continue
		}
		for _, s := range pf.Subfolders {
			note := "plugin " + p.Name
			if inMain(f, s) {
				note += ", hidden by the bundle's own folder " + s
			} else if b.Builtins[s] {
				note += ", shadowed by the built-in command " + s
				names = append(names, p.Name+"/"+s)
			}
			extra = append(extra, [2]string{s, "(" + note + ")"})
		}
	}
	fmt.Fprintf(w, "Bundle %s (%s):\n", b.Main.Dir, b.Main.Source)
	writeTasks(w, "nuv", f, extra, shadowed)
	fmt.Fprintln(w)
	sort.Strings(names)
	return names, nil
}

// TaskLine is one entry of `nuv -tasks`.
type TaskLine struct {
	Command string `json:"command"`
	Desc    string `json:"desc,omitempty"`
	Plugin  string `json:"plugin,omitempty"`
	// Shadowed is set for tasks under a top-level folder a built-in command hides.
	Shadowed bool `json:"shadowed,omitempty"`
}

// Tasks lists every task reachable through the bundle and its plugins as full command lines
// ("nuv kube watch"), depth first, folders in name order and tasks in file order.
func (b *Bundle) Tasks() ([]TaskLine, error) {
	var out []TaskLine
	mainFolders := map[string]bool{}
	var walk func(dir string, path []string, plugin string, top, shadowed bool) error
	walk = func(dir string, path []string, plugin string, top, shadowed bool) error {
		f, err := ReadFolder(dir, len(path) > 0)
		if err != nil {
			return err
		}
		if !(top && plugin != "") {
			for _, t := range f.Tasks {
				out = append(out, TaskLine{Command: strings.Join(append(append([]string{"nuv"}, path...), t.Name), " "), Desc: t.Desc, Plugin: plugin, Shadowed: shadowed})
			}
		}
		for _, s := range f.Subfolders {
			sh := shadowed || top && (b.Builtins[s] || plugin != "" && mainFolders[s])
			if err := walk(dir+"/"+s, append(append([]string{}, path...), s), plugin, false, sh); err != nil {
				return err
			}
		}
		return nil
	}
	if mf, err := ReadFolder(b.Main.Dir, false); err == nil {
		for _, s := range mf.Subfolders {
			mainFolders[s] = true
		}
	}
	if err := walk(b.Main.Dir, nil, "", true, false); err != nil {
		return nil, err
	}
	for _, p := range b.Plugins {
		if err := walk(p.Dir, nil, p.Name, true, false); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func inMain(f *Folder, name string) bool {
	for _, s := range f.Subfolders {
		if s == name {
			return true
		}
	}
	return false
}
