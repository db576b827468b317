package local

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	nuvsrc "github.com/nuv-dev/nuv"
	"github.com/nuv-dev/nuv/internal/cli"
)

// KubeVersion is the Kubernetes version the companion binary is built from; the only valid --version.
const KubeVersion = "1.36.3"

// SupportedVersions lists the valid --version values.
func SupportedVersions() []string { return []string{KubeVersion} }

// Companion locates (and on first use builds) nuv-kube, the binary that runs the cluster components.
type Companion struct {
	// Getenv reads NUV_KUBE_BIN, NUV_CACHE_DIR, XDG_CACHE_HOME, HOME and PATH.
	Getenv func(string) string
	Log    cli.Logger
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

// Binary returns the path of a nuv-kube built from the embedded sources, building it if needed.
// $NUV_KUBE_BIN, if set, names a prebuilt binary and nothing is built.
func (c Companion) Binary(ctx context.Context) (string, error) {
	getenv := c.getenv()
	if p := getenv("NUV_KUBE_BIN"); p != "" {
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			return "", fmt.Errorf("NUV_KUBE_BIN=%s is not a file: %v", p, err)
		}
		return filepath.Abs(p)
	}
	goBin, err := findGo(getenv)
	if err != nil {
		// No Go here (any more): a build of these very sources, whatever Go made it, will do.
		if bin := c.anyBuild(); bin != "" {
			return bin, nil
		}
		return "", err
	}
	goVersion, err := exec.CommandContext(ctx, goBin, "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("%s env GOVERSION: %w", goBin, err)
	}
	key, err := sourceKey(strings.TrimSpace(string(goVersion)))
	if err != nil {
		return "", err
	}
	dir := filepath.Join(CacheDir(getenv), "nuv-kube", key)
	bin := filepath.Join(dir, "nuv-kube")
	if isExecutable(bin) {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("companion cache %s: %w", dir, err)
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, "build.lock"), func() {
		c.log().Infof("waiting for another nuv building nuv-kube (%s)", dir)
	})
	if err != nil {
		return "", err
	}
	defer unlock()
	if isExecutable(bin) { // built by another nuv while we waited
		return bin, nil
	}
	if err := c.build(ctx, goBin, dir, bin); err != nil {
		return "", err
	}
	return bin, nil
}

func (c Companion) getenv() func(string) string {
	if c.Getenv == nil {
		return os.Getenv
	}
	return c.Getenv
}

func (c Companion) log() cli.Logger {
	if c.Log == nil {
		return cli.Quiet()
	}
	return c.Log
}

// sourceKey hashes the embedded sources and the Go version: the cache key of a build.
func sourceKey(goVersion string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", goVersion, KubeVersion)
	var files []string
	err := fs.WalkDir(nuvsrc.KubeSources, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := nuvsrc.KubeSources.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// anyBuild returns a cached nuv-kube built from the embedded sources by any Go version, or "".
func (c Companion) anyBuild() string {
	key, err := sourceKey("")
	if err != nil {
		return ""
	}
	dirs, _ := filepath.Glob(filepath.Join(CacheDir(c.getenv()), "nuv-kube", "*", "sources"))
	for _, f := range dirs {
		if b, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(b)) == key {
			if bin := filepath.Join(filepath.Dir(f), "nuv-kube"); isExecutable(bin) {
				return bin
			}
		}
	}
	return ""
}

func (c Companion) build(ctx context.Context, goBin, dir, bin string) error {
	log := c.log()
	start := time.Now()
	src := filepath.Join(dir, "src")
	log.Infof("building nuv-kube %s (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok) once; a cold build takes ~5 min on 2 cores", KubeVersion)
	log.Infof("  step 1/2: writing sources to %s", src)
	if err := os.RemoveAll(src); err != nil {
		return err
	}
	err := fs.WalkDir(nuvsrc.KubeSources, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := nuvsrc.KubeSources.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(src, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("write companion sources: %w", err)
	}
	log.Infof("  step 2/2: go build ./cmd/nuv-kube (modules from the Go module proxy)")
	pkg := "k8s.io/component-base/version"
	ldflags := fmt.Sprintf("-X %s.gitVersion=v%s -X %s.gitMajor=1 -X %s.gitMinor=36 -X %s.gitTreeState=clean", pkg, KubeVersion, pkg, pkg, pkg)
	tmp := bin + ".tmp"
	cmd := exec.CommandContext(ctx, goBin, "build", "-v", "-o", tmp, "-ldflags", ldflags, "./cmd/nuv-kube")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOWORK=off")
	out, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start go build: %w", err)
	}
	var count, total atomic.Int64
	go func() { // the number of packages involved, for the progress line (at most this many compile)
		list := exec.CommandContext(ctx, goBin, "list", "-deps", "./cmd/nuv-kube")
		list.Dir, list.Env = src, cmd.Env
		if out, err := list.Output(); err == nil {
			total.Store(int64(strings.Count(string(out), "\n")))
		}
	}()
	var tail []string
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			count.Add(1)
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
	go func() { <-done; waitErr <- cmd.Wait() }()
	for {
		select {
		case <-tick.C:
			of := ""
			if n := total.Load(); n > 0 {
				of = fmt.Sprintf(" of at most %d", n)
			}
			log.Infof("  building nuv-kube: %s elapsed, %d packages compiled%s (cached ones are skipped)", time.Since(start).Round(time.Second), count.Load(), of)
		case err := <-waitErr:
			if err != nil {
				os.Remove(tmp)
				return fmt.Errorf("build nuv-kube: %w\n%s", err, strings.Join(tail, "\n"))
			}
			if err := os.Rename(tmp, bin); err != nil {
				return err
			}
			if key, err := sourceKey(""); err == nil {
				_ = os.WriteFile(filepath.Join(dir, "sources"), []byte(key+"\n"), 0o644)
			}
			log.Infof("built nuv-kube in %s: %s", time.Since(start).Round(time.Second), bin)
			return nil
		}
	}
}

func findGo(getenv func(string) string) (string, error) {
	for _, dir := range filepath.SplitList(getenv("PATH")) {
		if p := filepath.Join(dir, "go"); isExecutable(p) {
			return p, nil
		}
	}
	if root := getenv("GOROOT"); root != "" && isExecutable(filepath.Join(root, "bin", "go")) {
		return filepath.Join(root, "bin", "go"), nil
	}
	if isExecutable("/usr/local/go/bin/go") {
		return "/usr/local/go/bin/go", nil
	}
	return "", fmt.Errorf("nuv builds its Kubernetes components (nuv-kube) once with Go, but no `go` is on PATH: install Go or set NUV_KUBE_BIN to a prebuilt nuv-kube")
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// lockFile takes an exclusive flock on path, waiting (and calling waiting once) while another nuv
// holds it.
func lockFile(ctx context.Context, path string, waiting func()) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !said {
			waiting()
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Prune removes the companion builds other than keep (a path Binary returned) that no running
// process executes, and returns the directories removed.
func (c Companion) Prune(keep string) ([]string, error) {
	root := filepath.Join(CacheDir(c.getenv()), "nuv-kube")
	entries, err := os.ReadDir(root)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	inUse := map[string]bool{filepath.Dir(keep): true}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if exe, err := os.Readlink(filepath.Join("/proc", p.Name(), "exe")); err == nil {
			inUse[filepath.Dir(strings.TrimSuffix(exe, " (deleted)"))] = true
		}
	}
	var removed []string
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() || inUse[dir] {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			return removed, fmt.Errorf("prune %s: %w", dir, err)
		}
		removed = append(removed, dir)
	}
	return removed, nil
}
