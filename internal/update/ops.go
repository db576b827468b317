package update

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/bundle"
)

// DefaultRepo is where `nuv -update` fetches the bundle when neither NUV_REPO nor a lock file says
// otherwise: nuv's own repository, whose olaris/ folder is the bundle.
const DefaultRepo = "https://github.com/nuv-dev/nuv.git"

// BundleOptions selects what `nuv -update` fetches.
type BundleOptions struct {
	// Dest is the bundle directory to replace (~/.nuv/<version>/olaris).
	Dest string
	// Repo and Branch come from NUV_REPO and NUV_BRANCH ("" when unset).
	Repo, Branch string
	// Ref is an explicit branch, tag or commit (the -update --ref flag).
	Ref string
	// Pin records Ref (or the fetched commit when Ref is empty) as the lock file's pin;
	// Unpin clears it.
	Pin, Unpin bool
}

// Plan is the source an update will use and why.
type Plan struct {
	Source Source
	Why    string
	Lock   Lock
}

// PlanBundle decides the source: repository from NUV_REPO, else the lock file, else DefaultRepo;
// ref from the --ref flag, else the lock file's pin, else NUV_BRANCH, else the remote's default.
func PlanBundle(o BundleOptions) (Plan, error) {
	lock, err := ReadLock(LockPath(o.Dest))
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Lock: lock}
	switch {
	case o.Repo != "":
		p.Source.Repo = o.Repo
	case lock.Repo != "":
		p.Source.Repo = lock.Repo
	default:
		p.Source.Repo = DefaultRepo
	}
	switch {
	case o.Ref != "":
		p.Source.Ref, p.Why = o.Ref, "--ref"
	case lock.Pin != "" && !o.Unpin:
		p.Source.Ref, p.Why = lock.Pin, "pinned in "+LockPath(o.Dest)
		if o.Branch != "" && o.Branch != lock.Pin {
			p.Why += fmt.Sprintf(" (NUV_BRANCH=%s ignored; unpin with -update --unpin)", o.Branch)
		}
	case o.Branch != "":
		p.Source.Ref, p.Why = o.Branch, "NUV_BRANCH"
	default:
		p.Why = "the remote's default branch"
	}
	return p, nil
}

// UpdateBundle fetches the main bundle and records the lock file.
func UpdateBundle(ctx context.Context, f Fetcher, o BundleOptions) (Result, Plan, error) {
	p, err := PlanBundle(o)
	if err != nil {
		return Result{}, p, err
	}
	res, err := f.Replace(ctx, p.Source, o.Dest, ValidateBundle(true))
	if err != nil {
		return Result{}, p, fmt.Errorf("%w; the bundle at %s was left as it was", err, o.Dest)
	}
	lock := Lock{Repo: p.Source.Repo, Ref: p.Source.Ref, Commit: res.Commit, Pin: p.Lock.Pin, Updated: time.Now().UTC()}
	if o.Unpin {
		lock.Pin = ""
	}
	if o.Pin {
		lock.Pin = o.Ref
		if lock.Pin == "" {
			lock.Pin = res.Commit
		}
	}
	if err := WriteLock(LockPath(o.Dest), lock); err != nil {
		return res, p, fmt.Errorf("bundle updated, but recording %s failed: %w", LockPath(o.Dest), err)
	}
	return res, p, nil
}

// PluginName derives the plugin directory name from a repository URL or path:
// ".../olaris-foo.git" and ".../foo" both give "olaris-foo".
func PluginName(repo string) (string, error) {
	p := repo
	if u, err := url.Parse(repo); err == nil && u.Scheme != "" {
		p = u.Path
	} else if i := strings.LastIndex(repo, ":"); i > 0 && !strings.Contains(repo[:i], "/") {
		p = repo[i+1:] // scp-like git@host:org/name.git
	}
	base := strings.TrimSuffix(path.Base(strings.TrimRight(filepath.ToSlash(p), "/")), ".git")
	if base == "" || base == "." || base == "/" {
		return "", fmt.Errorf("cannot derive a plugin name from %q", Redact(repo))
	}
	if !strings.HasPrefix(base, "olaris-") {
		base = "olaris-" + base
	}
	for _, r := range base {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "", fmt.Errorf("plugin name %q from %q has unsupported characters", base, Redact(repo))
		}
	}
	return base, nil
}

// InstallPlugin fetches repo into home/olaris-<name> (replacing an older copy atomically) and
// returns the plugin's directory. A plugin must have at least one top-level folder with a nuvfile.yml.
func InstallPlugin(ctx context.Context, f Fetcher, home, repo, ref string) (Result, error) {
	name, err := PluginName(repo)
	if err != nil {
		return Result{}, err
	}
	dest := filepath.Join(home, name)
	validate := func(dir string) error {
		if err := ValidateBundle(false)(dir); err != nil {
			return err
		}
		f, err := bundle.ReadFolder(dir, false)
		if err != nil {
			return err
		}
		if len(f.Subfolders) == 0 {
			return fmt.Errorf("a plugin needs at least one top-level folder with a %s", bundle.NuvfileName)
		}
		return nil
	}
	res, err := f.Replace(ctx, Source{Repo: repo, Ref: ref}, dest, validate)
	if err != nil {
		return Result{}, fmt.Errorf("install plugin %s: %w", name, err)
	}
	if err := WriteLock(LockPath(dest), Lock{Repo: repo, Ref: ref, Commit: res.Commit, Updated: time.Now().UTC()}); err != nil {
		return res, fmt.Errorf("plugin %s installed, but recording its lock file failed: %w", name, err)
	}
	return res, nil
}

// RemovePlugin deletes home/olaris-<name> and its lock file.
func RemovePlugin(home, name string) error {
	if !strings.HasPrefix(name, "olaris-") {
		name = "olaris-" + name
	}
	if strings.ContainsAny(name, `/\`) || name == "olaris-" {
		return fmt.Errorf("invalid plugin name %q", name)
	}
	dir := filepath.Join(home, name)
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("plugin %s is not installed (%s)", name, dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove plugin %s: %w", name, err)
	}
	os.Remove(LockPath(dir))
	return nil
}

// PluginInfo is one installed plugin as `nuv -plugin -l` lists it.
type PluginInfo struct {
	Name, Dir string
	Lock      Lock
	Folders   []string
}

// ListPlugins returns the installed plugins sorted by name.
func ListPlugins(home string) ([]PluginInfo, error) {
	roots, err := bundle.Plugins(home)
	if err != nil {
		return nil, err
	}
	var out []PluginInfo
	for _, r := range roots {
		pi := PluginInfo{Name: r.Name, Dir: r.Dir}
		pi.Lock, _ = ReadLock(LockPath(r.Dir))
		if f, err := bundle.ReadFolder(r.Dir, false); err == nil {
			pi.Folders = f.Subfolders
		}
		out = append(out, pi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
