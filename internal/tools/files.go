package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
)

func dieTool(_ context.Context, env *cli.Env, args []string) error {
	f := newFlags("die", "[-c CODE] MESSAGE...", `
Prints MESSAGE on stderr and exits with CODE (default 1): a task's way to stop with a reason.`, `nuv -die "no cluster selected: run nuv kube use"
nuv -die -c 3 "unsupported platform"`)
	code := f.IntP("code", "c", 1, "exit code (1-255)")
	f.SetInterspersed(false)
	if done, err := f.parse(env, args); done || err != nil {
		return err
	}
	if *code < 1 || *code > 255 {
		return f.usagef("exit code %d is not in 1-255", *code)
	}
	if f.NArg() > 0 {
		fmt.Fprintln(env.Err, strings.Join(f.Args(), " "))
	}
	return cli.Exit(*code, nil)
}

func emptyTool(_ context.Context, env *cli.Env, args []string) error {
	f := newFlags("empty", "PATH...", `
Exits 0 when every PATH is empty: a missing file, a file of zero bytes (or only whitespace with
-w), or a directory without entries. Exits 1, silently, as soon as one is not.`, `nuv -empty build/ && echo "nothing built yet"`)
	blank := f.BoolP("whitespace", "w", false, "a file holding only whitespace counts as empty")
	if done, err := f.parse(env, args); done || err != nil {
		return err
	}
	if f.NArg() == 0 {
		return f.usagef("no PATH given")
	}
	for _, p := range f.Args() {
		ok, err := isEmpty(absIn(env.Dir, p), *blank)
		if err != nil {
			return failf("empty", "%v", err)
		}
		if !ok {
			return cli.Exit(cli.ExitFailure, nil)
		}
	}
	return nil
}

func isEmpty(path string, blank bool) (bool, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if st.IsDir() {
		d, err := os.Open(path)
		if err != nil {
			return false, err
		}
		defer d.Close()
		_, err = d.Readdirnames(1)
		if err == io.EOF {
			return true, nil
		}
		return false, err
	}
	if st.Size() == 0 {
		return true, nil
	}
	if !blank {
		return false, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(b)) == "", nil
}

func executableTool(_ context.Context, env *cli.Env, args []string) error {
	f := newFlags("executable", "FILE...", `
Makes each FILE executable for whoever may read it (chmod +x on the read bits), like a download
step's "chmod +x" without needing chmod.`, `nuv -executable bin/kubectl bin/helm`)
	if done, err := f.parse(env, args); done || err != nil {
		return err
	}
	if f.NArg() == 0 {
		return f.usagef("no FILE given")
	}
	for _, p := range f.Args() {
		path := absIn(env.Dir, p)
		st, err := os.Stat(path)
		if err != nil {
			return failf("executable", "%v", err)
		}
		if st.IsDir() {
			return failf("executable", "%s is a directory", p)
		}
		mode := st.Mode().Perm()
		mode |= (mode & 0o444) >> 2 // r -> x for user, group, other
		if err := os.Chmod(path, mode|0o100); err != nil {
			return failf("executable", "%v", err)
		}
	}
	return nil
}

// absIn resolves p against the tool's working directory.
func absIn(dir, p string) string {
	if filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}
