// Package upgrade is the operator's upgrade path as nuv tests it (dtest --upgrade-from, all-kubes
// --upgrade-from): where the older version comes from (a commit of the project's git repository,
// checked out into a scratch directory, or an image reference), and what must survive the upgrade
// of the operator: the instance itself (its UID) and its data (an action written to the reference
// workload's controller, kept in its CouchDB, read back after the upgrade), plus what the upgraded
// operator changed on the instance's workloads.
package upgrade

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/runner"
)

// EnvFrom carries --upgrade-from from all-kubes to the target it runs on the upgrade path: a verb
// that knows the upgrade path (dtest) takes it as the default of its --upgrade-from.
const EnvFrom = "NUV_UPGRADE_FROM"

// Source is the older version an upgrade starts from.
type Source struct {
	// From is the version as the user gave it.
	From string
	// Commit is the full commit From names in the project's git repository; empty for an image.
	Commit string
	// Image is From as an operator image reference (the operator's manifests are then the working
	// tree's); empty for a commit.
	Image string
}

// Resolve decides what from names: a commit (a tag, branch or commit of the git repository at
// project, tried first) or else an image reference (it must name a tag or digest, or a registry
// path, so that a misspelt tag is not taken for an image). Anything else is an error naming it.
func Resolve(ctx context.Context, project, from string) (Source, error) {
	from = strings.TrimSpace(from)
	if from == "" {
		return Source{}, errors.New("--upgrade-from: empty version (a git tag or commit, or an operator image reference)")
	}
	if strings.HasPrefix(from, "-") {
		return Source{}, fmt.Errorf("--upgrade-from %q: not a git ref nor an image reference", from)
	}
	out, err := runner.Output(ctx, runner.Cmd{Path: "git", Args: []string{"rev-parse", "--verify", "--quiet", "--end-of-options", from + "^{commit}"}, Dir: project})
	if err == nil {
		return Source{From: from, Commit: strings.TrimSpace(string(out))}, nil
	}
	if strings.ContainsAny(from, ":@/") {
		ref, perr := name.ParseReference(from)
		if perr == nil {
			return Source{From: from, Image: ref.Name()}, nil
		}
		return Source{}, fmt.Errorf("--upgrade-from %q: not a commit of the git repository at %s, and not an image reference: %v", from, project, perr)
	}
	return Source{}, fmt.Errorf("--upgrade-from %q: not a commit of the git repository at %s (a tag, branch or commit: `git tag` lists the tags), nor an image reference (registry/name:tag)", from, project)
}

// Checkout writes the tree of commit of the git repository at project into dir (created; it must
// not exist or be empty), as `git archive` gives it: no .git, nothing of the working tree.
func Checkout(ctx context.Context, project, commit, dir string) error {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("checkout of %s: %s is not empty", commit, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkout of %s: %w", commit, err)
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := runner.Run(ctx, runner.Cmd{Path: "git", Args: []string{"archive", "--format=tar", commit}, Dir: project, Stdout: pw})
		pw.CloseWithError(err)
		done <- err
	}()
	xerr := fsutil.Untar(pr, dir)
	if xerr == nil {
		io.Copy(io.Discard, pr) // the archive's trailing blocks
	} else {
		pr.CloseWithError(xerr) // let git end early
	}
	gerr := <-done
	switch {
	case xerr != nil && (gerr == nil || errors.Is(gerr, xerr)):
		return fmt.Errorf("checkout of %s into %s: %w", commit, dir, xerr) // git ended because untar did
	case gerr != nil:
		return fmt.Errorf("git archive %s in %s: %w", commit, project, gerr)
	}
	return nil
}
