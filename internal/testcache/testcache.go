// Package testcache runs the test command's packages from test binaries cached by content.
//
// `go test -count=1` compiles only what changed (the Go build cache) but links every test binary
// again on every run: for nuv's packages, which import Kubernetes, three cloud SDKs and kind, a
// link is 10 to 50 s of CPU, and a run links over a hundred of them. A test binary is a pure
// function of the compiled packages it links (their build-cache outputs are named by their
// content), the Go toolchain and the link flags; Key hashes exactly those, so a binary linked once
// is run again until one of its packages changes. The runner then does what go test -json does
// for a package (start, the test binary's events through test2json, the "ok"/"FAIL" line, the
// package's result), so the report, the budget and a person reading the stream see no difference.
//
// A package the go command cannot compile (or whose key cannot be worked out) is run by
// `go test -json` itself, which reports its build errors as it always does.
package testcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Package is one package of the run, as `go list -test -deps -export` saw it.
type Package struct {
	// ImportPath and Dir are the package's (the test binary runs in Dir, as under go test).
	ImportPath, Dir string
	// Key names the test binary of the package by content ("" when it has no test files, or
	// Fallback is set).
	Key string
	// NoTests: the package has no test files.
	NoTests bool
	// Fallback says why the package is left to `go test` ("" when it is not).
	Fallback string
}

// listed is the part of `go list -json` this package reads.
type listed struct {
	ImportPath string
	Dir        string
	Export     string
	Deps       []string
	ForTest    string
	Incomplete bool
	Error      *struct{ Err string }
}

// Toolchain is what besides the packages goes into a test binary: the go command's version and
// target, and the link flags.
type Toolchain struct {
	GoVersion, GOOS, GOARCH, CGO string
	Ldflags                      string
}

// List works out the packages matched by patterns, in the order given (each once), and the key of
// each one's test binary. It compiles what is not compiled yet (go list -export), not links.
func List(ctx context.Context, goBin string, tc Toolchain, patterns []string) ([]Package, error) {
	roots, err := rootsOf(ctx, goBin, patterns)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, goBin, append([]string{"list", "-e", "-test", "-deps", "-export",
		"-json=ImportPath,Dir,Export,Deps,ForTest,Incomplete,Error"}, roots...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		return nil, fmt.Errorf("go list -export of the test packages: %w\n%s", err, stderr.String())
	}
	all := map[string]*listed{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list -export: %w", err)
		}
		all[l.ImportPath] = &l
	}
	pkgs := make([]Package, 0, len(roots))
	for _, r := range roots {
		p := Package{ImportPath: r}
		if l := all[r]; l != nil {
			p.Dir = l.Dir
		}
		main := all[r+".test"]
		switch {
		case main == nil && all[r] != nil && all[r].Error == nil && !all[r].Incomplete:
			p.NoTests = true
		case main == nil:
			p.Fallback = "go list gave no test binary for it"
		default:
			p.Key, p.Fallback = key(tc, main, all)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// rootsOf expands patterns to import paths, keeping the first occurrence's place (go test runs
// `a ./...` with a first).
func rootsOf(ctx context.Context, goBin string, patterns []string) ([]string, error) {
	var roots []string
	seen := map[string]bool{}
	for _, pat := range patterns {
		out, err := exec.CommandContext(ctx, goBin, "list", "-e", "-f", "{{.ImportPath}}", pat).Output()
		if err != nil {
			return nil, fmt.Errorf("go list %s: %w", pat, err)
		}
		for _, ip := range strings.Fields(string(out)) {
			if !seen[ip] {
				seen[ip] = true
				roots = append(roots, ip)
			}
		}
	}
	return roots, nil
}

// key hashes the toolchain and the build-cache outputs of the test main and every package it
// links; a package without an output (not compiled: a build error) leaves the package to go test.
func key(tc Toolchain, main *listed, all map[string]*listed) (string, string) {
	h := sha256.New()
	fmt.Fprintf(h, "nuv testcache 1\n%s %s/%s cgo=%s\nldflags %q\n", tc.GoVersion, tc.GOOS, tc.GOARCH, tc.CGO, tc.Ldflags)
	deps := append([]string{main.ImportPath}, main.Deps...)
	sort.Strings(deps[1:])
	for _, d := range deps {
		l := all[d]
		if l == nil {
			return "", "go list did not describe " + d
		}
		if l.Error != nil || l.Export == "" {
			if d == "unsafe" || d == "C" { // no archive of their own
				continue
			}
			why := "not compiled"
			if l.Error != nil {
				why = l.Error.Err
			}
			return "", d + ": " + why
		}
		fmt.Fprintf(h, "%s %s\n", d, filepath.Base(l.Export))
	}
	return hex.EncodeToString(h.Sum(nil))[:32], ""
}

// Cache is a directory of test binaries by key: DIR/<key>/<name>.test.
type Cache struct {
	Dir   string
	GoBin string
	// Ldflags link every binary (they are part of the key through Toolchain).
	Ldflags string
}

// Binary returns the test binary of p, linking it first if the cache has none (linked says so).
func (c Cache) Binary(ctx context.Context, p Package) (bin string, linked bool, out []byte, err error) {
	dir := filepath.Join(c.Dir, p.Key)
	bin = filepath.Join(dir, filepath.Base(p.ImportPath)+".test")
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		now := time.Now()
		_ = os.Chtimes(dir, now, now) // in use: Prune keeps it
		return bin, false, nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, nil, err
	}
	tmp := bin + fmt.Sprintf(".%d.tmp", os.Getpid())
	cmd := exec.CommandContext(ctx, c.GoBin, "test", "-c", "-vet=off", "-ldflags="+c.Ldflags, "-o", tmp, p.ImportPath)
	out, err = cmd.CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		return "", true, out, fmt.Errorf("go test -c %s: %w", p.ImportPath, err)
	}
	if err := os.Rename(tmp, bin); err != nil {
		os.Remove(tmp)
		return "", true, out, err
	}
	owner := p.ImportPath + "\n" + p.Dir + "\n"
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o644); err != nil {
		return "", true, out, err
	}
	c.dropOlder(p.Key, owner)
	return bin, true, out, nil
}

// ownerFile names the package (import path and directory) a cache entry's binary tests.
const ownerFile = "package"

// dropOlder removes the other binaries of the same package in the same directory: one binary per
// package and checkout is kept (a binary of an older version of the code is not run again).
func (c Cache) dropOlder(key, owner string) {
	ents, _ := os.ReadDir(c.Dir)
	for _, e := range ents {
		if e.Name() == key || !e.IsDir() {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(c.Dir, e.Name(), ownerFile)); err == nil && string(b) == owner {
			os.RemoveAll(filepath.Join(c.Dir, e.Name()))
		}
	}
}

// Prune removes the binaries not used for keep (their directory's mtime is touched on every use),
// then the least recently used ones until the cache holds at most maxBytes, and returns how many
// bytes it freed.
func (c Cache) Prune(keep time.Duration, maxBytes int64) (int64, error) {
	ents, err := os.ReadDir(c.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	type entry struct {
		dir  string
		used time.Time
		size int64
	}
	var all []entry
	var total int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !e.IsDir() {
			continue
		}
		d := entry{dir: filepath.Join(c.Dir, e.Name()), used: fi.ModTime()}
		files, _ := os.ReadDir(d.dir)
		for _, f := range files {
			if i, err := f.Info(); err == nil {
				d.size += i.Size()
			}
		}
		all = append(all, d)
		total += d.size
	}
	sort.Slice(all, func(i, j int) bool { return all[i].used.Before(all[j].used) })
	var freed int64
	for _, d := range all {
		if time.Since(d.used) < keep && total <= maxBytes {
			break
		}
		if err := os.RemoveAll(d.dir); err != nil {
			return freed, err
		}
		freed += d.size
		total -= d.size
	}
	return freed, nil
}
