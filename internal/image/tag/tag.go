// Package tag implements `image-tag`: the release tag <P><BASETAG>.<YYMMDDhh> (or .YYMMDDhhmm) as an
// annotated git tag. Unlike the ancestor it never deletes other tags: it creates this hour's tag,
// reuses it when it already exists, and moves only that one tag when forced.
package tag

import (
	"context"
	"fmt"
	"github.com/nuv-dev/nuv/internal/runner"
	"os"
	"strings"
	"time"
)

// Options name the tag.
type Options struct {
	// Prefix is the ancestor's P= prefix (e.g. "v"), put before BaseTag.
	Prefix string
	// BaseTag is BASETAG, e.g. 0.1.0-dev.
	BaseTag string
	// Minute adds the minutes: YYMMDDhhmm instead of YYMMDDhh.
	Minute bool
}

// Name returns the tag for time t (UTC).
func Name(o Options, t time.Time) string {
	layout := "06010215"
	if o.Minute {
		layout = "0601021504"
	}
	return o.Prefix + o.BaseTag + "." + t.UTC().Format(layout)
}

// Result tells what Ensure did.
type Result struct {
	Tag string
	// Reused is true when the tag already existed and was left as it was.
	Reused bool
	// Moved is true when --force moved an existing tag to HEAD.
	Moved bool
	// Commit is the commit the tag points to.
	Commit string
}

// Ensure creates the annotated tag for now in the git repository at dir, or reuses it when it
// already exists (force moves it to HEAD instead). No other tag is touched.
func Ensure(ctx context.Context, dir string, o Options, now time.Time, force bool) (Result, error) {
	if o.BaseTag == "" {
		return Result{}, fmt.Errorf("no base tag: set BASETAG (e.g. BASETAG=0.1.0-dev) or pass --base")
	}
	name := Name(o, now)
	if err := checkRefName(ctx, dir, name); err != nil {
		return Result{}, err
	}
	head, err := git(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return Result{}, fmt.Errorf("image tag needs a git repository with a commit in %s: %w", dir, err)
	}
	existing, err := git(ctx, dir, "rev-parse", "-q", "--verify", "refs/tags/"+name+"^{commit}")
	if err == nil && existing != "" {
		if !force {
			return Result{Tag: name, Reused: true, Commit: existing}, nil
		}
		if existing == head {
			return Result{Tag: name, Reused: true, Commit: head}, nil
		}
		if _, err := git(ctx, dir, "tag", "-a", "-f", "-m", message(name), name, head); err != nil {
			return Result{}, fmt.Errorf("move tag %s to HEAD: %w", name, err)
		}
		return Result{Tag: name, Moved: true, Commit: head}, nil
	}
	if _, err := git(ctx, dir, "tag", "-a", "-m", message(name), name, head); err != nil {
		return Result{}, fmt.Errorf("create tag %s: %w", name, err)
	}
	return Result{Tag: name, Commit: head}, nil
}

// Current returns the newest image tag for these options (any hour or minute), or "" when none exists.
func Current(ctx context.Context, dir string, o Options) (string, error) {
	if o.BaseTag == "" {
		return "", fmt.Errorf("no base tag: set BASETAG (e.g. BASETAG=0.1.0-dev) or pass --base")
	}
	out, err := git(ctx, dir, "tag", "--list", "--sort=-creatordate", "--sort=-refname", o.Prefix+o.BaseTag+".*")
	if err != nil {
		return "", fmt.Errorf("list tags in %s: %w", dir, err)
	}
	prefix := o.Prefix + o.BaseTag + "."
	best := ""
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		stamp := strings.TrimPrefix(t, prefix)
		if t == "" || !isStamp(stamp) {
			continue
		}
		// YYMMDDhh and YYMMDDhhmm compare correctly once padded to minutes.
		if best == "" || pad(stamp) > pad(strings.TrimPrefix(best, prefix)) {
			best = t
		}
	}
	return best, nil
}

func isStamp(s string) bool {
	if len(s) != 8 && len(s) != 10 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func pad(stamp string) string {
	if len(stamp) == 8 {
		return stamp + "00"
	}
	return stamp
}

func message(name string) string { return "nuv image tag " + name }

func checkRefName(ctx context.Context, dir, name string) error {
	if _, err := git(ctx, dir, "check-ref-format", "refs/tags/"+name); err != nil {
		return fmt.Errorf("%q is not a valid git tag name (check BASETAG and P): %w", name, err)
	}
	return nil
}

// git runs git in dir and returns its trimmed stdout. Annotated tags need a tagger: when the
// repository has no user configured, nuv signs as "nuv".
func git(ctx context.Context, dir string, args ...string) (string, error) {
	env := append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	if len(args) > 0 && args[0] == "tag" && !hasIdentity(ctx, dir) {
		env = append(env, "GIT_COMMITTER_NAME=nuv", "GIT_COMMITTER_EMAIL=nuv@localhost")
	}
	out, err := runner.Output(ctx, runner.Cmd{Path: "git", Args: args, Dir: dir, Env: env})
	if err != nil {
		return "", err // "git ARGS: exit status N" and git's message
	}
	return strings.TrimSpace(string(out)), nil
}

func hasIdentity(ctx context.Context, dir string) bool {
	return runner.Run(ctx, runner.Cmd{Path: "git", Args: []string{"var", "GIT_COMMITTER_IDENT"}, Dir: dir}) == nil
}

// Git exposes the repository facts a build stamps into the image.
type Git struct{ Dir string }

// Revision is HEAD's commit id.
func (g Git) Revision(ctx context.Context) (string, error) {
	return git(ctx, g.Dir, "rev-parse", "HEAD")
}

// CommitEpoch is HEAD's commit time in seconds (the SOURCE_DATE_EPOCH of a reproducible build).
func (g Git) CommitEpoch(ctx context.Context) (int64, error) {
	out, err := git(ctx, g.Dir, "log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return 0, err
	}
	var n int64
	if _, err := fmt.Sscan(out, &n); err != nil {
		return 0, fmt.Errorf("commit time %q: %w", out, err)
	}
	return n, nil
}

// Source is the origin remote as an https URL, or "" when there is none.
func (g Git) Source(ctx context.Context) string {
	out, err := git(ctx, g.Dir, "config", "--get", "remote.origin.url")
	if err != nil {
		return ""
	}
	return HTTPSURL(out)
}

// HTTPSURL turns git@host:org/repo.git and ssh:// remotes into https://host/org/repo; credentials
// embedded in https remotes are dropped so they never reach an image label.
func HTTPSURL(remote string) string {
	s := strings.TrimSpace(remote)
	s = strings.TrimSuffix(s, ".git")
	switch {
	case strings.HasPrefix(s, "git@"):
		s = "https://" + strings.Replace(strings.TrimPrefix(s, "git@"), ":", "/", 1)
	case strings.HasPrefix(s, "ssh://"):
		s = "https://" + strings.TrimPrefix(s, "ssh://")
		if at := strings.Index(s, "@"); at >= 0 {
			s = "https://" + s[at+1:]
		}
	}
	if strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") {
		scheme, rest, _ := strings.Cut(s, "://")
		host, path, _ := strings.Cut(rest, "/")
		if at := strings.LastIndex(host, "@"); at >= 0 {
			host = host[at+1:]
		}
		s = scheme + "://" + host
		if path != "" {
			s += "/" + path
		}
	}
	return s
}

// Delete removes the tag name (used to undo a tag nuv just created when the push it was for failed).
func Delete(ctx context.Context, dir, name string) error {
	_, err := git(ctx, dir, "tag", "-d", name)
	return err
}
