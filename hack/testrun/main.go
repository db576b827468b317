// Command testrun is the test command's `go test -json -count=1`: it runs the packages' tests from
// test binaries cached by content (internal/testcache), so a package whose compiled code did not
// change is not linked again, and writes the same event stream go test -json writes.
//
//	testrun [-p N] [-timeout D] [-short] [-run RE] [-skip RE] [-ldflags F] [-history FILE] PATTERN...
//
// With -history, packages start longest first by the wall times FILE recorded (packages it does
// not know first, in the order given), and the times of this run's passed packages are written
// back to FILE at the end, unless -run or -skip ran only some of their tests.
//
// The binaries live under $NUV_CACHE_DIR/testbin (else ~/.cache/nuv/testbin), one per package and
// checkout (a new link replaces the package's older binary); at the start, those not used for two
// days are removed, then the least recently used beyond NUV_TESTBIN_MAX_GIB (default 12; a test
// binary of nuv's cluster packages is 100-260 MB). It prints one line on stderr at the end: how many binaries
// were linked and in how long, and how many came from the cache.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/testcache"
)

func main() {
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("testrun", flag.ContinueOnError)
	jobs := fs.Int("p", 2, "packages linked and run at once")
	timeout := fs.Duration("timeout", 10*time.Minute, "each test binary's -test.timeout")
	short := fs.Bool("short", false, "pass -test.short")
	runRE := fs.String("run", "", "pass -test.run")
	skipRE := fs.String("skip", "", "pass -test.skip")
	ldflags := fs.String("ldflags", "-w", "link flags of the test binaries")
	historyFile := fs.String("history", "", "start packages longest first by the times recorded in this file, and record this run's")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "testrun: no packages given")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	goBin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testrun:", err)
		return 1
	}
	tc, err := toolchain(ctx, goBin, *ldflags)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testrun:", err)
		return 1
	}
	t0 := time.Now()
	pkgs, err := testcache.List(ctx, goBin, tc, fs.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "testrun:", err)
		return 1
	}
	listed := time.Since(t0)
	history := testcache.History{Seconds: map[string]float64{}}
	if *historyFile != "" {
		if history, err = testcache.LoadHistory(*historyFile); err != nil {
			fmt.Fprintf(os.Stderr, "testrun: %v (packages start in the order given)\n", err)
		}
		pkgs = history.Order(pkgs)
	}
	cache := testcache.Cache{Dir: filepath.Join(companion.CacheDir(os.Getenv), "testbin"), GoBin: goBin, Ldflags: *ldflags}
	if code := prune(cache); code != 0 {
		return code
	}
	var mu sync.Mutex
	var links int
	var linkTime time.Duration
	r := &testcache.Runner{Cache: cache, Jobs: *jobs, Timeout: *timeout, Short: *short, Out: os.Stdout,
		GoTestArgs: []string{"-count=1", "-vet=off", "-ldflags=" + *ldflags},
		Linked: func(p testcache.Package, took time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			links++
			linkTime += took
		},
		Ran: func(p testcache.Package, took time.Duration, passed bool) {
			if passed {
				mu.Lock()
				defer mu.Unlock()
				history.Record(p.ImportPath, took)
			}
		}}
	if *runRE != "" {
		r.TestFlags = append(r.TestFlags, "-test.run="+*runRE)
	}
	if *skipRE != "" {
		r.TestFlags = append(r.TestFlags, "-test.skip="+*skipRE)
	}
	ok := r.Run(ctx, pkgs)
	// A run of some tests only (-run, -skip) or an interrupted one says nothing of the packages' times.
	if *historyFile != "" && *runRE == "" && *skipRE == "" && ctx.Err() == nil {
		if err := history.Save(*historyFile); err != nil {
			fmt.Fprintln(os.Stderr, "testrun: recording the packages' times:", err)
		}
	}
	withTests, fallback := 0, 0
	for _, p := range pkgs {
		switch {
		case p.Fallback != "":
			fallback++
			fmt.Fprintf(os.Stderr, "testrun: %s ran under go test: %s\n", p.ImportPath, p.Fallback)
		case !p.NoTests:
			withTests++
		}
	}
	fmt.Fprintf(os.Stderr, "testrun: %d test binaries: %d linked (%.0fs of link wall time), %d from the cache (%s); packages keyed in %.1fs\n",
		withTests, links, linkTime.Seconds(), withTests-links, cache.Dir, listed.Seconds())
	if !ok {
		return 1
	}
	return 0
}

// prune removes the test binaries unused for two days, then the least recently used beyond
// NUV_TESTBIN_MAX_GIB (default 12); it returns an exit code for a bad setting, else 0.
func prune(cache testcache.Cache) int {
	maxGiB := int64(12)
	if v := os.Getenv("NUV_TESTBIN_MAX_GIB"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "testrun: NUV_TESTBIN_MAX_GIB=%q: want a whole number of GiB\n", v)
			return 2
		}
		maxGiB = n
	}
	if freed, err := cache.Prune(48*time.Hour, maxGiB<<30); err != nil {
		fmt.Fprintln(os.Stderr, "testrun: pruning the test binaries:", err)
	} else if freed > 0 {
		fmt.Fprintf(os.Stderr, "testrun: removed test binaries unused for two days or beyond %d GiB (%d MB)\n", maxGiB, freed>>20)
	}
	return 0
}

// toolchain asks the go command what besides the packages goes into a test binary.
func toolchain(ctx context.Context, goBin, ldflags string) (testcache.Toolchain, error) {
	out, err := exec.CommandContext(ctx, goBin, "env", "GOVERSION", "GOOS", "GOARCH", "CGO_ENABLED").Output()
	if err != nil {
		return testcache.Toolchain{}, fmt.Errorf("go env: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 4 {
		return testcache.Toolchain{}, fmt.Errorf("go env: unexpected answer %q", out)
	}
	return testcache.Toolchain{GoVersion: f[0], GOOS: f[1], GOARCH: f[2], CGO: f[3], Ldflags: ldflags}, nil
}
