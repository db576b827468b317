package bundle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/docopt"
)

// Request is one task run a dispatch asks for.
type Request struct {
	Root *Root
	// Dir is the bundle folder; the task runs there, as in published nuv bundles.
	Dir string
	// Nuvfile is the Taskfile to run (Dir/nuvfile.yml).
	Nuvfile string
	// Task is the task name; "" runs the nuvfile's default task.
	Task string
	// Vars are the docopt variables (nil without a usage file); []string values are lists.
	Vars map[string]any
	// CLIArgs are the words after the task when the folder has no usage file (go-task's CLI_ARGS).
	CLIArgs []string
	// Prereq marks a prerequisite run: Nuvfile is a prereq.yml and Task one of its tasks.
	Prereq bool
}

// Runner runs a bundle task (the go-task interpreter in nuv, a recorder in tests).
type Runner interface {
	Run(ctx context.Context, req Request) error
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, req Request) error

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, req Request) error { return f(ctx, req) }

// UsageError is a command line the folder's docopt usage rejects; Usage is printed with it.
type UsageError struct {
	Path  []string
	Msg   string
	Usage string
}

func (e *UsageError) Error() string {
	return fmt.Sprintf("nuv %s: %s\n%s", strings.Join(e.Path, " "), e.Msg, e.Usage)
}

// Dispatch resolves args and runs the task, or prints the folder's help to out when no task is
// named. A docopt parse error is a *UsageError; unknown and ambiguous words are *UnknownError and
// *AmbiguousError.
func (b *Bundle) Dispatch(ctx context.Context, out io.Writer, r Runner, args []string) error {
	t, err := b.Resolve(args)
	if err != nil {
		return err
	}
	if t.Task == "" && !t.Default {
		if len(t.Path) == 0 && t.Folder.Usage == "" {
			_, err := b.Help(out)
			return err
		}
		return FolderHelp(out, t)
	}
	if t.Folder.Nuvfile == "" {
		return fmt.Errorf("bundle folder %s has no %s", t.Folder.Dir, NuvfileName)
	}
	req := Request{Root: t.Root, Dir: t.Folder.Dir, Nuvfile: t.Folder.Nuvfile, Task: t.Task}
	if t.Folder.Usage == "" {
		req.CLIArgs = t.Args
		if err := runPrereqs(ctx, r, t); err != nil {
			return err
		}
		return r.Run(ctx, req)
	}
	words := t.Args
	if t.Task != "" {
		words = append([]string{t.Task}, t.Args...)
	}
	vars, err := docopt.Parse(t.Folder.Usage, words)
	if errors.Is(err, docopt.ErrHelp) {
		return FolderHelp(out, t)
	}
	var ue *docopt.UsageError
	if errors.As(err, &ue) {
		return &UsageError{Path: t.Path, Msg: ue.Msg, Usage: ue.Usage}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", t.Folder.UsageFile, err)
	}
	req.Vars = vars
	if err := runPrereqs(ctx, r, t); err != nil {
		return err
	}
	return r.Run(ctx, req)
}

// runPrereqs runs every public task of each prereq.yml on the way from the root to the target's
// folder, root first, tasks in file order. Published bundles write them with `status:` checks so
// they are no-ops once satisfied (for example a tool already downloaded).
func runPrereqs(ctx context.Context, r Runner, t *Target) error {
	for _, dir := range t.Dirs {
		p := filepath.Join(dir, PrereqName)
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		tasks, err := parseTasks(p, data)
		if err != nil {
			return err
		}
		for _, tk := range tasks {
			req := Request{Root: t.Root, Dir: dir, Nuvfile: p, Task: tk.Name, Prereq: true}
			if err := r.Run(ctx, req); err != nil {
				return fmt.Errorf("prerequisite %s of %s: %w", tk.Name, p, err)
			}
		}
	}
	return nil
}
