// Command testtime prints the differences between two bills of nuv's test command
// (_test-artifacts/budget.json, written by hack/test.sh at its end; package internal/testbudget):
// the totals, each stage's wall and CPU time and each package's test binary wall time and test
// counts, the largest change first.
//
//	go run ./bench/testtime [-min SECONDS] A.json B.json
//
// Keep a run's budget before the next run overwrites it (cp _test-artifacts/budget.json
// /tmp/before.json), then compare: A is the earlier run, a change is B minus A.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/nuv-dev/nuv/internal/testbudget"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "testtime:", err)
		os.Exit(1)
	}
}

func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("testtime", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	minPackage := fs.Float64("min", 1, "list a package only when its wall time changed by at least this many seconds (or its tests changed)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w (usage: testtime [-min SECONDS] A.json B.json)", err)
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("want two budget files, got %d (usage: testtime [-min SECONDS] A.json B.json)", fs.NArg())
	}
	if *minPackage < 0 {
		return fmt.Errorf("-min %g: want a number of seconds >= 0", *minPackage)
	}
	a, err := testbudget.Read(fs.Arg(0))
	if err != nil {
		return err
	}
	b, err := testbudget.Read(fs.Arg(1))
	if err != nil {
		return err
	}
	return testbudget.Compare(a, b).Write(w, fs.Arg(0), fs.Arg(1), *minPackage)
}
