// Package companion builds the programs nuv carries as embedded Go sources (nuv-kube, the node
// image's binaries, the full nuv program behind the slim front binary) and caches each build by
// content: the Go version, the program's version, its build tags, the files of its own source
// directories and the modules its packages come from. A build made once is found again by every
// nuv of the same sources; two nuvs wanting the same build wait for one another. The package is
// light on purpose: the slim `nuv` binary imports it.
package companion

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/kubebin"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/runner"
)

// Program is one program nuv builds from embedded sources.
type Program struct {
	// Name is the binary's name and its cache directory's: CacheDir/<Name>/<key>/<Name>.
	Name string
	// Sources holds go.mod, go.sum and the source directories, laid out as in nuv's module.
	Sources fs.FS
	// Dirs are the source directories (slash-separated, the main package first) whose files key
	// the build; every package of nuv's module the program imports must be in one of them. An
	// entry "D/..." covers D and everything below it; "..." covers every file of Sources.
	Dirs []string
	// What the program holds, for the progress lines.
	What string
	// Version is the version of what the build makes (Kubernetes' for nuv-kube, nuv's for the full
	// program): shown in the progress lines and part of the key.
	Version string
	// Ldflags are go build -ldflags (they derive from Version, so the key need not hash them).
	Ldflags string
	// Static builds without cgo (for images without a C library).
	Static bool
	// Tags are go build -tags.
	Tags string
	// SharedSrc writes the sources of every build into one directory, CacheDir/<Name>/src (builds
	// of the program then take turns): without -trimpath the Go build cache keys a package by its
	// directory, so a build of changed sources compiles only the packages that changed.
	SharedSrc bool
	// IgnoreTests leaves _test.go files and testdata directories out of the key and the written
	// sources: editing a test does not make the program build again.
	IgnoreTests bool
	// Also are more main packages (slash-separated directories of Sources) built into the same
	// directory, each named after its directory's last element, after the program itself and
	// before it is put in place: a build directory holding the program holds them too. Their
	// packages are part of the module set (ModuleSet) and so of the key. Built in the program's
	// source directory with its flags, they compile only the packages the program does not
	// import, nothing twice (a program that imports none of those only links).
	Also []string
	// ColdEstimate says how long a cold build takes on this many cores before one was measured
	// here (nil: say nothing until measured).
	ColdEstimate func(cores int) (time.Duration, string)
}

// Builder finds and makes cached builds of Programs.
type Builder struct {
	// Getenv reads NUV_CACHE_DIR, XDG_CACHE_HOME, HOME, PATH and Go's variables (nil: os.Getenv).
	Getenv func(string) string
	Log    cli.Logger
	// Release is this nuv's release, whose companion archives it trusts (nil: ThisRelease, as
	// compiled in).
	Release *Release
}

// CacheDir is where nuv keeps built companions, shared by every NUV_HOME: $NUV_CACHE_DIR, else
// $XDG_CACHE_HOME/nuv, else ~/.cache/nuv.
func CacheDir(getenv func(string) string) string {
	if d := getenv("NUV_CACHE_DIR"); d != "" {
		return d
	}
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "nuv")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".cache", "nuv")
}

func (b Builder) getenv() func(string) string {
	if b.Getenv == nil {
		return os.Getenv
	}
	return b.Getenv
}

func (b Builder) release() Release {
	if b.Release != nil {
		return *b.Release
	}
	return ThisRelease(b.Log)
}

func (b Builder) log() cli.Logger {
	if b.Log == nil {
		return cli.Quiet()
	}
	return b.Log
}

// Cached returns a build of p made before, or "" with the Go binary and the cache directory a
// build would use (goBin "" when Go is missing: err says so, and bin is any build of these very
// sources that an earlier Go made, if there is one).
func (b Builder) Cached(ctx context.Context, p Program) (bin, goBin, dir string, err error) {
	getenv := b.getenv()
	goBin, err = runner.FindGo(getenv)
	if err != nil {
		return b.Any(p), "", "", err
	}
	goVersion, err := runner.Output(ctx, runner.Cmd{Path: goBin, Args: []string{"env", "GOVERSION"}})
	if err != nil {
		return "", "", "", err
	}
	modules, err := b.ModuleSet(ctx, goBin, p)
	if err != nil {
		return "", "", "", err
	}
	key, err := Key(strings.TrimSpace(string(goVersion)), p, modules)
	if err != nil {
		return "", "", "", err
	}
	dir = filepath.Join(CacheDir(getenv), p.Name, key)
	if bin := filepath.Join(dir, p.Name); IsExecutable(bin) {
		return bin, goBin, dir, nil
	}
	return "", goBin, dir, nil
}

// Build returns a cached build of p or builds it (offline: with the module cache only).
func (b Builder) Build(ctx context.Context, p Program, offline bool) (string, error) {
	bin, goBin, dir, err := b.Cached(ctx, p)
	if bin != "" {
		return bin, nil
	}
	if err != nil {
		return "", err
	}
	bin = filepath.Join(dir, p.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("companion cache %s: %w", dir, err)
	}
	lock := filepath.Join(dir, "build.lock")
	if p.SharedSrc {
		lock = filepath.Join(filepath.Dir(dir), "src.lock")
	}
	unlock, err := fsutil.Lock(ctx, lock, func() {
		b.log().Infof("waiting for another nuv building %s (%s)", p.Name, dir)
	})
	if err != nil {
		return "", err
	}
	defer unlock()
	if IsExecutable(bin) { // built by another nuv while we waited
		return bin, nil
	}
	if err := b.build(ctx, p, goBin, dir, bin, offline); err != nil {
		return "", err
	}
	return bin, nil
}

// Key hashes the Go version, the program's version, its build tags, go.mod's go, toolchain and
// godebug lines, the files of its source directories and its module set (ModuleSet): the cache
// key of its build.
func Key(goVersion string, p Program, modules string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", goVersion, p.Version)
	if p.Tags != "" {
		fmt.Fprintf(h, "tags %s\n", p.Tags)
	}
	gomod, err := fs.ReadFile(p.Sources, "go.mod")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) > 0 && (f[0] == "go" || f[0] == "toolchain" || f[0] == "godebug") {
			fmt.Fprintf(h, "go.mod %s\n", strings.TrimSpace(line))
		}
	}
	if err := hashFiles(h, p, false); err != nil {
		return "", err
	}
	fmt.Fprintf(h, "modules\n%s", modules)
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// hashFiles writes the program's source files (and go.mod and go.sum when withModFiles) into h.
func hashFiles(h io.Writer, p Program, withModFiles bool) error {
	var files []string
	err := fs.WalkDir(p.Sources, ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && p.builds(name) && (p.Owns(path.Dir(name)) || withModFiles && (name == "go.mod" || name == "go.sum")) {
			files = append(files, name)
		}
		return err
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := fs.ReadFile(p.Sources, f)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return nil
}

// Owns says whether dir (slash-separated, relative to the module root) is one of p's source
// directories.
func (p Program) Owns(dir string) bool {
	for _, d := range p.Dirs {
		switch {
		case d == "...":
			return true
		case strings.HasSuffix(d, "/..."):
			root := strings.TrimSuffix(d, "/...")
			if dir == root || strings.HasPrefix(dir, root+"/") {
				return true
			}
		case dir == d:
			return true
		}
	}
	return false
}

// builds says whether the file name (slash-separated) takes part in the build.
func (p Program) builds(name string) bool {
	if !p.IgnoreTests {
		return true
	}
	return !strings.HasSuffix(name, "_test.go") && !strings.HasPrefix(name, "testdata/") && !strings.Contains(name, "/testdata/")
}

// ModuleSetPath is where the module set of p built from its go.mod, go.sum and sources is cached:
// the set changes only when they do.
func (b Builder) ModuleSetPath(p Program) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "module set v1\ntags %s\nstatic %v\n", p.Tags, p.Static)
	if err := hashFiles(h, p, true); err != nil {
		return "", err
	}
	return filepath.Join(CacheDir(b.getenv()), p.Name, "modules", hex.EncodeToString(h.Sum(nil))[:16]), nil
}

// ModuleSet returns the modules the packages of p and of its Also programs come from, one "path
// version[ => path version]" a line, sorted: with its own files, what decides what its build makes. `go list` over
// the written-out sources works it out once per go.mod, go.sum and sources (a few seconds; on a
// fresh machine it downloads the modules the build needs anyway); it is cached beside the builds.
func (b Builder) ModuleSet(ctx context.Context, goBin string, p Program) (string, error) {
	file, err := b.ModuleSetPath(p)
	if err != nil {
		return "", err
	}
	if data, err := os.ReadFile(file); err == nil && len(data) > 0 {
		return string(data), nil
	}
	tmp, err := os.MkdirTemp("", "nuv-modules-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := WriteSources(p.Sources, tmp, p.builds); err != nil {
		return "", err
	}
	b.log().Infof("working out the modules %s is built from (go list, once per nuv version)", p.Name)
	format := `{{with .Module}}{{if .Main}}main {{$.ImportPath}}{{else}}{{.Path}} {{.Version}}{{with .Replace}} => {{.Path}} {{.Version}}{{end}}{{end}}{{end}}`
	args := []string{"list", "-deps", "-tags", p.Tags, "-f", format, "./" + p.Dirs[0]}
	for _, also := range p.Also {
		args = append(args, "./"+also)
	}
	out, err := runner.Output(ctx, runner.Cmd{Path: goBin, Args: args, Dir: tmp, Env: buildEnv(p, false)})
	if err != nil {
		return "", fmt.Errorf("list the modules of %s: %w", p.Name, err)
	}
	set := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if imp, ok := strings.CutPrefix(line, "main "); ok {
			// A package of nuv's own module: its files must key the build.
			rel := strings.TrimPrefix(strings.TrimPrefix(imp, modulePath(tmp)), "/")
			if rel == "" {
				rel = "."
			}
			if !p.Owns(rel) {
				return "", fmt.Errorf("%s imports %s, which is not among its source directories %v: add it to the Program's Dirs (and to the go:embed of its sources)", p.Name, imp, p.Dirs)
			}
			continue
		}
		if line != "" {
			set[line] = true
		}
	}
	lines := make([]string, 0, len(set))
	for l := range set {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	modules := strings.Join(lines, "\n") + "\n"
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", err
	}
	if err := fsutil.WriteFileAtomic(file, []byte(modules), 0o644); err != nil {
		return "", err
	}
	return modules, nil
}

// modulePath is the module path of go.mod in dir.
func modulePath(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1]
		}
	}
	return ""
}

// WriteSources writes the files of src that keep says to (nil: every file) under dir.
func WriteSources(src fs.FS, dir string, keep func(name string) bool) error {
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || keep != nil && !keep(p) {
			return err
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("write companion sources: %w", err)
	}
	return nil
}

// buildEnv is the environment of go build and go list over the written-out sources.
func buildEnv(p Program, offline bool) []string {
	env := append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOWORK=off")
	if p.Static {
		env = append(env, "CGO_ENABLED=0")
	}
	if offline {
		env = append(env, "GOPROXY=off")
	}
	return env
}

// Any returns a cached build of p made from these very sources by any Go version, or "".
func (b Builder) Any(p Program) string {
	file, err := b.ModuleSetPath(p)
	if err != nil {
		return ""
	}
	modules, err := os.ReadFile(file) // no Go to work it out: only a set worked out before will do
	if err != nil {
		return ""
	}
	key, err := Key("", p, string(modules))
	if err != nil {
		return ""
	}
	dirs, _ := filepath.Glob(filepath.Join(CacheDir(b.getenv()), p.Name, "*", "sources"))
	for _, f := range dirs {
		if data, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(data)) == key {
			if bin := filepath.Join(filepath.Dir(f), p.Name); IsExecutable(bin) {
				return bin
			}
		}
	}
	return ""
}

func (b Builder) build(ctx context.Context, p Program, goBin, dir, bin string, offline bool) error {
	log := b.log()
	start := time.Now()
	src := filepath.Join(dir, "src")
	if p.SharedSrc {
		src = filepath.Join(filepath.Dir(dir), "src")
	}
	cores := runtime.NumCPU()
	log.Infof("building %s %s (%s) from source once", p.Name, p.Version, p.What)
	records := filepath.Join(CacheDir(b.getenv()), p.Name, "builds.json")
	if recs := kubebin.LoadBuildRecords(records); len(recs) > 0 {
		est, basis := kubebin.ColdEstimate(recs, cores)
		log.Infof("  on a cold cache that takes about %s on %d cores (%s); packages compiled before are not compiled again", est.Round(time.Minute), cores, basis)
	} else if p.ColdEstimate != nil {
		est, basis := p.ColdEstimate(cores)
		log.Infof("  on a cold cache that takes about %s on %d cores (%s); packages compiled before are not compiled again", est.Round(time.Minute), cores, basis)
	}
	log.Infof("  step 1/2: writing sources to %s", src)
	if err := os.RemoveAll(src); err != nil {
		return err
	}
	if err := WriteSources(p.Sources, src, p.builds); err != nil {
		return err
	}
	env := buildEnv(p, offline)
	pkgDir := "./" + p.Dirs[0]
	if offline {
		log.Infof("  step 2/2: go build %s (offline: modules from the module cache only)", pkgDir)
	} else {
		log.Infof("  step 2/2: go build %s (modules from the Go module proxy)", pkgDir)
	}
	tmp := bin + ".tmp"
	out, pw := io.Pipe()
	args := []string{"build", "-v", "-tags", p.Tags, "-o", tmp}
	if p.Ldflags != "" {
		args = append(args, "-ldflags", p.Ldflags)
	}
	proc, err := runner.Start(ctx, runner.Cmd{Path: goBin, Args: append(args, pkgDir), Dir: src, Env: env, Stderr: pw})
	if err != nil {
		return err
	}
	var count, stale, total, firstAt atomic.Int64
	go func() { // how many packages this build compiles (the stale ones), for the estimate
		out, err := runner.Output(ctx, runner.Cmd{Path: goBin, Args: []string{"list", "-deps", "-tags", p.Tags, "-f", "{{if .Stale}}stale{{end}}", pkgDir}, Dir: src, Env: env})
		if err == nil {
			total.Store(int64(strings.Count(string(out), "\n")))
			stale.Store(int64(strings.Count(string(out), "stale")))
		}
	}()
	var tail []string
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if count.Add(1) == 1 {
				firstAt.Store(time.Now().UnixNano())
			}
			tail = append(tail, sc.Text())
			if len(tail) > 40 {
				tail = tail[1:]
			}
		}
		close(done)
	}()
	tick := time.NewTicker(15 * time.Second)
	defer tick.Stop()
	waitErr := make(chan error, 1)
	go func() { err := proc.Wait(); pw.Close(); <-done; waitErr <- err }()
	for {
		select {
		case <-tick.C:
			n := count.Load()
			compiling := time.Duration(0) // since the first package compiled (module downloads are over)
			if t := firstAt.Load(); t > 0 {
				compiling = time.Since(time.Unix(0, t))
			}
			log.Infof("  building %s: %s", p.Name, kubebin.BuildProgress(time.Since(start), compiling, n, stale.Load(), total.Load()))
		case err := <-waitErr:
			if err != nil {
				os.Remove(tmp)
				return fmt.Errorf("build %s: %w\n%s", p.Name, err, strings.Join(tail, "\n"))
			}
			for _, also := range p.Also {
				if err := b.buildAlso(ctx, p, goBin, src, dir, also, env); err != nil {
					os.Remove(tmp)
					return err
				}
			}
			if err := os.Rename(tmp, bin); err != nil {
				return err
			}
			if modules, err := b.ModuleSet(ctx, goBin, p); err != nil {
				log.Warnf("%s: %v (a nuv without Go will not find this build)", p.Name, err)
			} else if key, err := Key("", p, modules); err == nil {
				_ = os.WriteFile(filepath.Join(dir, "sources"), []byte(key+"\n"), 0o644)
			}
			took := time.Since(start)
			_ = kubebin.AppendBuildRecord(records, kubebin.BuildRecord{Packages: count.Load(), Total: total.Load(), Seconds: took.Seconds(), Cores: cores, When: time.Now().UTC()})
			log.Infof("built %s in %s (%d packages compiled): %s", p.Name, took.Round(time.Second), count.Load(), bin)
			return nil
		}
	}
}

// buildAlso builds the main package also of p's sources in src into dir (named after also's last
// element), with p's tags and ldflags.
func (b Builder) buildAlso(ctx context.Context, p Program, goBin, src, dir, also string, env []string) error {
	name := path.Base(also)
	t0 := time.Now()
	out := filepath.Join(dir, name)
	args := []string{"build", "-tags", p.Tags, "-o", out + ".tmp"}
	if p.Ldflags != "" {
		args = append(args, "-ldflags", p.Ldflags)
	}
	if err := runner.Run(ctx, runner.Cmd{Path: goBin, Args: append(args, "./"+also), Dir: src, Env: env}); err != nil {
		os.Remove(out + ".tmp")
		return fmt.Errorf("build %s beside %s: %w", name, p.Name, err)
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		return err
	}
	b.log().Infof("  built %s beside %s in %s", name, p.Name, time.Since(t0).Round(time.Second))
	return nil
}

// IsExecutable says whether p is an executable file.
func IsExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// Prune removes the builds of p beyond the newest keep, except those a running process executes,
// with the module sets beyond the newest keep, and returns the directories removed. Programs whose
// sources change with every edit of nuv (the full program) call it after each build, so a
// developer's cache does not grow by a build per edit.
func (b Builder) Prune(p Program, keep int) ([]string, error) {
	root := filepath.Join(CacheDir(b.getenv()), p.Name)
	entries, err := os.ReadDir(root)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	inUse := RunningDirs()
	type build struct {
		dir string
		mod time.Time
	}
	var builds []build
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		st, err := os.Stat(filepath.Join(dir, p.Name))
		if !e.IsDir() || err != nil {
			continue
		}
		builds = append(builds, build{dir, st.ModTime()})
	}
	sort.Slice(builds, func(i, j int) bool { return builds[i].mod.After(builds[j].mod) })
	var removed []string
	for i, bd := range builds {
		if i < keep || inUse[bd.dir] {
			continue
		}
		if err := os.RemoveAll(bd.dir); err != nil {
			return removed, fmt.Errorf("prune %s: %w", bd.dir, err)
		}
		removed = append(removed, bd.dir)
	}
	mods, _ := os.ReadDir(filepath.Join(root, "modules"))
	type modFile struct {
		path string
		mod  time.Time
	}
	var sets []modFile
	for _, m := range mods {
		if info, err := m.Info(); err == nil && !m.IsDir() {
			sets = append(sets, modFile{filepath.Join(root, "modules", m.Name()), info.ModTime()})
		}
	}
	sort.Slice(sets, func(i, j int) bool { return sets[i].mod.After(sets[j].mod) })
	for i, m := range sets {
		if i >= keep {
			_ = os.Remove(m.path)
		}
	}
	return removed, nil
}

// RunningDirs returns the directories of the executables running processes execute (from
// /proc/PID/exe): a cached build there is in use and must stay.
func RunningDirs() map[string]bool {
	dirs := map[string]bool{}
	procs, _ := os.ReadDir("/proc")
	for _, pr := range procs {
		if exe, err := os.Readlink(filepath.Join("/proc", pr.Name(), "exe")); err == nil {
			dirs[filepath.Dir(strings.TrimSuffix(exe, " (deleted)"))] = true
		}
	}
	return dirs
}
