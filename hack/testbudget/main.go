// Command testbudget writes the bill of a run of nuv's test command (package internal/testbudget):
// hack/test.sh runs it when it ends, whatever happened, with the stage file it kept and go test's
// event stream, and it writes _test-artifacts/budget.json for `go run ./bench/testtime A B`.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/testbudget"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "testbudget:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("testbudget", flag.ContinueOnError)
	out := fs.String("o", "", "the budget file to write (required)")
	stages := fs.String("stages", "", "the stage file hack/test.sh kept")
	events := fs.String("events", "", "go test -json's event stream of the run (absent: no packages)")
	started := fs.String("started", "", "when the run started, seconds since the epoch (required)")
	load := fs.String("load", "", "the content of /proc/loadavg when the run started")
	commit := fs.String("commit", "", "the checkout's commit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *started == "" || fs.NArg() > 0 {
		return fmt.Errorf("usage: testbudget -o FILE -started EPOCH [-stages FILE] [-events FILE] [-load LOADAVG] [-commit C]")
	}
	start, err := strconv.ParseFloat(*started, 64)
	if err != nil {
		return fmt.Errorf("-started %q is not seconds since the epoch", *started)
	}
	in := testbudget.Input{Started: time.Unix(0, int64(start*1e9)), Commit: *commit, CPUs: runtime.NumCPU(), StageFile: *stages, EventFile: *events}
	if *load != "" {
		f := strings.Fields(*load)
		if len(f) < 3 {
			return fmt.Errorf("-load %q: want the three load averages of /proc/loadavg", *load)
		}
		for i := range 3 {
			if in.Load[i], err = strconv.ParseFloat(f[i], 64); err != nil {
				return fmt.Errorf("-load %q: %q is not a load average", *load, f[i])
			}
		}
	}
	b, err := testbudget.Make(in, time.Now())
	if err != nil {
		return err
	}
	if err := testbudget.Write(*out, b); err != nil {
		return err
	}
	fmt.Printf("budget: %s (%.0fs wall; %.0fs CPU in setup stages; compare two with go run ./bench/testtime A B)\n", *out, b.WallSeconds, b.SetupCPU())
	return nil
}
