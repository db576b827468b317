// Command firstrun is the benchmark of a first run from a download (issue 36): from this
// machine's release (nuv's archive and the nuv-kube companion archive, made by the release code
// and cached), a loopback HTTP mirror serving that dist/, an empty HOME and nuv cache and a PATH
// without Go, it downloads and verifies nuv's archive, unpacks it, links `task`, runs `nuv up` in
// a copy of the project (the README's main job: local cluster, operator, instance, deployment
// test) and prints the time to a tested instance, broken down: download and verification (nuv's
// archive, and nuv-kube fetched by nuv itself from the mirror), cluster start, operator, instance,
// deployment test.
//
// Go is hidden from nuv as on a machine without it: PATH has none, and as root the run is in a
// mount namespace of its own with an empty tmpfs over /usr/local/go (where nuv would look for a
// toolchain). A local cluster's operator runs on the host and is built from the project's
// sources with Go: with -go, nuv finds this machine's Go and its module and build caches for that
// build alone (the figures then include it, warm); without, `nuv up` stops there and the bench
// prints what it measured up to then.
//
// The release is built with `go run ./cmd/nuv-release -platforms host -companions nuv-kube`
// into the bench's cache (~/.cache/nuv-bench/firstrun/<version>, the newest version only), once per version; its time is
// printed (cold: compiling nuv-full and nuv-kube with -trimpath; warm: links and gzip). Figures
// only: it asserts nothing. It deletes the cluster and its scratch directory at the end (-keep
// keeps the directory).
//
// Usage (from the repository root): go run ./bench/firstrun [-dist DIR] [-go] [-keep]
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/release"
)

func main() {
	dist := flag.String("dist", "", "a release directory to serve (default: build this machine's release into the bench's cache, once per version)")
	withGo := flag.Bool("go", false, "let nuv find this machine's Go (and its module and build caches) for the host operator's build")
	keep := flag.Bool("keep", false, "keep the scratch directory")
	flag.Parse()
	if err := run(*dist, *withGo, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "firstrun:", err)
		os.Exit(1)
	}
}

func run(dist string, withGo, keep bool) error {
	ctx := context.Background()
	repo, err := os.Getwd()
	if err != nil {
		return err
	}
	host := release.Host()
	if dist == "" {
		stamp, err := release.Describe(ctx, repo, os.Getenv)
		if err != nil {
			return err
		}
		if dist, err = buildRelease(repo, stamp.Version); err != nil {
			return err
		}
	}
	found, _ := filepath.Glob(filepath.Join(dist, release.ArchiveName("*", host)))
	if len(found) != 1 {
		return fmt.Errorf("%s holds %d archives of nuv for %s, want one", dist, len(found), host)
	}
	archive := filepath.Base(found[0])
	fmt.Printf("release: %s\n", dist)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dist))}
	go srv.Serve(ln)
	defer srv.Close()
	mirror := "http://" + ln.Addr().String()

	scratch, err := os.MkdirTemp("", "nuv-firstrun-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(scratch)
	}
	bin, home, project := filepath.Join(scratch, "bin"), filepath.Join(scratch, "home"), filepath.Join(scratch, "project")
	for _, d := range []string{bin, home, project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := copyProject(repo, project); err != nil {
		return err
	}

	// 1. download nuv's archive and checksums.txt from the mirror, verify, unpack, link task
	t0 := time.Now()
	sums, err := get(mirror + "/" + release.ChecksumsName)
	if err != nil {
		return err
	}
	data, err := get(mirror + "/" + archive)
	if err != nil {
		return err
	}
	if err := verify(sums, archive, data); err != nil {
		return err
	}
	if err := unpack(data, bin); err != nil {
		return err
	}
	if err := os.Symlink("nuv", filepath.Join(bin, "task")); err != nil {
		return err
	}
	download := time.Since(t0)
	fmt.Printf("downloaded, verified and unpacked %s (%.1f MiB) in %.1fs\n", archive, float64(len(data))/(1<<20), download.Seconds())

	env := []string{"HOME=" + home, "PATH=" + bin + ":/usr/bin:/bin", "NUV_RELEASE_MIRROR=" + mirror, "TERM=dumb", "LANG=C.UTF-8"}
	if withGo {
		for _, k := range []string{"GOMODCACHE", "GOCACHE"} {
			out, err := exec.Command("go", "env", k).Output()
			if err != nil {
				return fmt.Errorf("go env %s: %w", k, err)
			}
			env = append(env, k+"="+strings.TrimSpace(string(out)))
		}
	}
	nuv := filepath.Join(bin, "nuv")
	defer func() { // the cluster and the host operator go with it
		cmd := exec.Command(nuv, "cluster", "delete", "dev")
		cmd.Dir, cmd.Env = project, env
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "firstrun: nuv cluster delete dev: %v\n%s", err, out)
		}
	}()

	// 2. nuv up, Go hidden
	args := []string{nuv, "up"}
	hidden := "PATH without Go"
	if !withGo && os.Geteuid() == 0 && isDir("/usr/local/go") {
		if p, err := exec.LookPath("unshare"); err == nil {
			args = append([]string{p, "--mount", "--propagation", "private", "sh", "-c", `mount -t tmpfs tmpfs /usr/local/go && exec "$0" "$@"`}, args...)
			hidden += ", /usr/local/go hidden (mount namespace)"
		}
	}
	if withGo {
		hidden = "PATH without Go; nuv finds " + goRoot() + " for the operator's build (-go)"
	}
	fmt.Printf("running nuv up (%s, HOME and cache empty, %d cores)\n", hidden, runtime.NumCPU())
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = project, env
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	t1 := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	var log strings.Builder
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Printf("  | %s\n", line)
			log.WriteString(line + "\n")
		}
		close(done)
	}()
	upErr := cmd.Wait()
	pw.Close()
	<-done
	up := time.Since(t1)

	report(log.String(), download, up, upErr)
	return nil
}

var (
	stepRE  = regexp.MustCompile(`^==> (local cluster|operator|instance|deployment test)\b.*\(([0-9.]+)s\)$`)
	fetchRE = regexp.MustCompile(`fetched and verified (\S+\.tar\.gz) in ([0-9.]+m?s)`)
	doneRE  = regexp.MustCompile(`^up in ([0-9.]+)s`)
)

// report prints the breakdown from up's step lines ("==> operator (12.3s)": the time since up
// started) and nuv's fetch lines ("fetched and verified <archive> in 1.4s"), each fetch counted
// as download and taken out of the step it happened in.
func report(log string, download, up time.Duration, upErr error) {
	order := []string{"local cluster", "operator", "instance", "deployment test"}
	names := map[string]string{"local cluster": "cluster start", "operator": "operator", "instance": "instance", "deployment test": "dtest"}
	steps := map[string]float64{}
	fetchedIn := map[string]float64{}
	type fetch struct {
		archive string
		took    time.Duration
	}
	var fetches []fetch
	total, current := -1.0, ""
	for _, line := range strings.Split(log, "\n") {
		if m := stepRE.FindStringSubmatch(line); m != nil {
			steps[m[1]], _ = strconv.ParseFloat(m[2], 64)
			current = m[1]
		}
		if m := fetchRE.FindStringSubmatch(line); m != nil {
			d, _ := time.ParseDuration(m[2])
			fetches = append(fetches, fetch{m[1], d})
			fetchedIn[current] += d.Seconds()
		}
		if m := doneRE.FindStringSubmatch(line); m != nil {
			total, _ = strconv.ParseFloat(m[1], 64)
		}
	}
	fmt.Println()
	fmt.Println("first run from a download")
	row := func(name string, secs float64, note string) { fmt.Printf("  %-84s %6.1fs%s\n", name, secs, note) }
	row("download+verify: "+"nuv's archive (by the bench)", download.Seconds(), "")
	for _, f := range fetches {
		row("download+verify: "+f.archive+" (by nuv)", f.took.Seconds(), "")
	}
	for i, s := range order {
		start, ok := steps[s]
		if !ok {
			continue
		}
		end, ok := total, total >= 0
		if i+1 < len(order) {
			if v, found := steps[order[i+1]]; found {
				end, ok = v, true
			}
		}
		if !ok {
			fmt.Printf("  %-84s %7s\n", names[s], "failed")
			continue
		}
		note := ""
		if fetchedIn[s] > 0 {
			note = "  (without its downloads)"
		}
		row(names[s], end-start-fetchedIn[s], note)
	}
	row("nuv up, whole process", up.Seconds(), "")
	if upErr != nil {
		fmt.Printf("  %-84s %7s  (nuv up: %v; its last lines are above)\n", "time to a tested instance", "none", upErr)
		return
	}
	row("time to a tested instance", (download + up).Seconds(), "  (target 90 s on 2 cores)")
}

// buildRelease returns the bench's cached release of version v for this machine, building it
// first when it is not there (the time is printed).
func buildRelease(repo, v string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "nuv-bench", "firstrun", v)
	if isFile(filepath.Join(dir, release.ChecksumsName)) && !strings.HasSuffix(v, "-dirty") {
		fmt.Printf("release %s cached in %s\n", v, dir)
		return dir, nil
	}
	// one release is kept: those of other versions go first (116 MB each)
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "*"))
	for _, o := range old {
		if o != dir {
			os.RemoveAll(o)
		}
	}
	fmt.Printf("building the release %s for this machine (nuv, nuv-kube and whisk-operator archives) into %s\n", v, dir)
	t0 := time.Now()
	cmd := exec.Command("go", "run", "./cmd/nuv-release", "-platforms", "host", "-companions", "nuv-kube,whisk-operator", "-out", dir)
	cmd.Dir, cmd.Stdout, cmd.Stderr = repo, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build the release: %w", err)
	}
	fmt.Printf("built the release in %s\n", time.Since(t0).Round(time.Second))
	return dir, nil
}

// copyProject writes the committed files of the repository into dir (git archive HEAD): the
// project `nuv up` runs in, without touching the checkout.
func copyProject(repo, dir string) error {
	archive := exec.Command("git", "archive", "--format=tar", "HEAD")
	archive.Dir = repo
	untar := exec.Command("tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	if err := untar.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		return fmt.Errorf("git archive: %w", err)
	}
	return untar.Wait()
}

func get(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// verify checks data against the line for name in a checksums.txt, as `sha256sum -c` would.
func verify(sums []byte, name string, data []byte) error {
	sum := sha256.Sum256(data)
	got := hex.EncodeToString(sum[:])
	for _, line := range strings.Split(string(sums), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[1] == name {
			if f[0] != got {
				return fmt.Errorf("%s: SHA-256 %s, checksums.txt says %s", name, got, f[0])
			}
			return nil
		}
	}
	return fmt.Errorf("checksums.txt has no line for %s", name)
}

func unpack(data []byte, dir string) error {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return fsutil.Untar(gz, dir)
}

func goRoot() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "Go"
	}
	return strings.TrimSpace(string(out))
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
