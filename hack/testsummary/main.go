// Command testsummary reads `go test -json` on stdin and prints nuv's test report (see package
// internal/testsummary); it exits 1 when a test or package failed. hack/test.sh pipes into it and
// passes -stages, the file of its setup stages, so that the report lists each stage's wall and
// CPU time.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/nuv-dev/nuv/internal/testsummary"
)

func main() {
	stageFile := flag.String("stages", "", "hack/test.sh's stage file: its stages are listed in the report")
	flag.Parse()
	var rp testsummary.Report
	if *stageFile != "" {
		f, err := os.Open(*stageFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(1)
		}
		rp.Stages, err = testsummary.ReadStages(f, *stageFile)
		f.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(1)
		}
	}
	s, err := rp.Run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if !s.OK() {
		os.Exit(1)
	}
}
