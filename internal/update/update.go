// Package update fetches bundles from git remotes with the git CLI: `nuv -update` (the main bundle,
// from NUV_REPO / NUV_BRANCH or a ref pinned in the lock file beside the bundle) and `nuv -plugin`
// (olaris-<name> plugins). A fetch lands in a temporary directory beside the target, is checked
// (nuvroot.json and every nuvfile.yml must parse), and only then replaces the old copy with an
// atomic directory exchange; a failed or offline fetch leaves the old bundle untouched.
package update

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/bundle"
	"github.com/nuv-dev/nuv/internal/lazy"
	"github.com/nuv-dev/nuv/internal/runner"
)

// Fetcher runs git. The zero value uses "git" from PATH.
type Fetcher struct {
	// Git is the git binary (default: "git" looked up on PATH).
	Git string
	// Env is extra environment for git (KEY=VALUE); GIT_TERMINAL_PROMPT=0 is always set so a
	// private remote fails instead of waiting for a password.
	Env []string
}

// Source is what to fetch.
type Source struct {
	Repo string
	// Ref is a branch, tag or commit; "" is the remote's default branch.
	Ref string
}

// Result describes a completed fetch.
type Result struct {
	Dir    string
	Commit string
}

// Validator checks a fetched tree before it replaces the old copy.
type Validator func(dir string) error

// Replace fetches src into dest: a temporary checkout beside dest, validated, then swapped in.
func (f Fetcher) Replace(ctx context.Context, src Source, dest string, validate Validator) (Result, error) {
	if src.Repo == "" {
		return Result{}, errors.New("no repository to fetch from (set NUV_REPO or pass a URL)")
	}
	parent := filepath.Dir(dest)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Result{}, fmt.Errorf("%s is not writable (set NUV_HOME to another directory): %w", parent, err)
	}
	removeStale(parent, "."+filepath.Base(dest)+".tmp-")
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dest)+".tmp-*")
	if err != nil {
		return Result{}, fmt.Errorf("%s is not writable (set NUV_HOME to another directory): %w", parent, err)
	}
	defer os.RemoveAll(tmp)
	commit, err := f.checkout(ctx, src, tmp)
	if err != nil {
		return Result{}, err
	}
	if err := os.RemoveAll(filepath.Join(tmp, ".git")); err != nil {
		return Result{}, fmt.Errorf("clean the checkout: %w", err)
	}
	tree := tmp
	// a repository that carries its bundle in olaris/ (like nuv's own) is accepted too
	if !exists(filepath.Join(tmp, bundle.NuvrootName)) && exists(filepath.Join(tmp, "olaris", bundle.NuvrootName)) {
		tree = filepath.Join(tmp, "olaris")
	}
	if validate != nil {
		if err := validate(tree); err != nil {
			return Result{}, fmt.Errorf("fetched %s at %s is not a valid bundle: %w", Redact(src.Repo), short(commit), err)
		}
	}
	if err := os.Chmod(tree, 0o755); err != nil {
		return Result{}, err
	}
	res := Result{Dir: dest, Commit: commit}
	if err := swap(tree, dest); err != nil {
		return Result{}, err
	}
	return res, nil
}

func (f Fetcher) checkout(ctx context.Context, src Source, dir string) (string, error) {
	what := Redact(src.Repo)
	if src.Ref != "" {
		what += " (" + src.Ref + ")"
	}
	if _, err := f.git(ctx, dir, "init", "--quiet"); err != nil {
		return "", fmt.Errorf("fetch %s: %w", what, err)
	}
	ref := src.Ref
	if ref == "" {
		ref = "HEAD"
	}
	if _, err := f.git(ctx, dir, "fetch", "--quiet", "--depth", "1", "--no-tags", src.Repo, ref); err != nil {
		// an abbreviated commit cannot be fetched by name: fetch the branches and tags, then resolve it
		if !isHex(src.Ref) {
			return "", fmt.Errorf("fetch %s: %w", what, err)
		}
		if _, err2 := f.git(ctx, dir, "fetch", "--quiet", "--tags", src.Repo, "+refs/heads/*:refs/remotes/origin/*"); err2 != nil {
			return "", fmt.Errorf("fetch %s: %w", what, err2)
		}
		full, err2 := f.git(ctx, dir, "rev-parse", "--verify", "--quiet", src.Ref+"^{commit}")
		if err2 != nil {
			return "", fmt.Errorf("fetch %s: no commit %s in the repository: %w", what, src.Ref, err)
		}
		ref = full
	} else {
		ref = "FETCH_HEAD"
	}
	if _, err := f.git(ctx, dir, "-c", "advice.detachedHead=false", "checkout", "--quiet", ref); err != nil {
		return "", fmt.Errorf("check out %s: %w", what, err)
	}
	commit, err := f.git(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		return "", fmt.Errorf("check out %s: %w", what, err)
	}
	return commit, nil
}

// git runs one git command in dir and returns its trimmed stdout; a failure carries git's message.
func (f Fetcher) git(ctx context.Context, dir string, args ...string) (string, error) {
	bin := f.Git
	if bin == "" {
		bin = "git"
	}
	out, err := runner.Output(ctx, runner.Cmd{Path: bin, Args: args, Dir: dir,
		Env: append(append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "LC_ALL=C"), f.Env...)})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		var re *runner.RunError
		msg := ""
		if errors.As(err, &re) {
			msg = gitMessage(string(re.Stderr))
			if msg == "" {
				msg = re.Err.Error()
			}
		} else {
			msg = err.Error()
		}
		// git's own words only: the command line holds the repository URL, which may carry a token
		return "", fmt.Errorf("git %s: %s", args[0], redactText(msg))
	}
	return strings.TrimSpace(string(out)), nil
}

// removeStale deletes temporary checkouts an interrupted nuv left behind (older than an hour, so a
// concurrent update's checkout is never touched).
func removeStale(dir, prefix string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// gitMessage keeps git's fatal/error lines (the reason), or its whole output when it has none.
func gitMessage(stderr string) string {
	var keep []string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "fatal:") || strings.HasPrefix(l, "error:") {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		return strings.TrimSpace(stderr)
	}
	return strings.Join(keep, "; ")
}

var hexRef = lazy.MustCompile(`^[0-9a-fA-F]{4,40}$`)

func isHex(s string) bool { return hexRef.MatchString(s) }

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// Redact removes credentials from a repository URL before it is printed.
func Redact(repo string) string {
	u, err := url.Parse(repo)
	if err != nil || u.User == nil {
		return repo
	}
	u.User = url.User("***")
	return u.String()
}

var urlCreds = lazy.MustCompile(`(://)[^/@\s]+@`)

func redactText(s string) string { return urlCreds.ReplaceAllString(s, "${1}***@") }

// ValidateBundle accepts a tree holding nuvroot.json (when requireRoot) whose nuvroot.json and every
// nuvfile.yml parse.
func ValidateBundle(requireRoot bool) Validator {
	return func(dir string) error {
		if _, err := os.Stat(filepath.Join(dir, bundle.NuvrootName)); err != nil && requireRoot {
			return fmt.Errorf("no %s at its top", bundle.NuvrootName)
		}
		if _, err := bundle.LoadRoot(dir, bundle.FromHome); err != nil {
			return err
		}
		folders := 0
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != dir {
				return filepath.SkipDir
			}
			if !d.IsDir() && d.Name() == bundle.NuvfileName {
				folders++
				_, err := bundle.ReadFolder(filepath.Dir(p), true)
				return err
			}
			return nil
		})
		if err != nil {
			return err
		}
		if folders == 0 {
			return fmt.Errorf("no %s in it", bundle.NuvfileName)
		}
		return nil
	}
}
