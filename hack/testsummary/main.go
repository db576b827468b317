// Command testsummary reads `go test -json` on stdin and prints nuv's test report (see package
// internal/testsummary); it exits 1 when a test or package failed. hack/test.sh pipes into it.
package main

import (
	"fmt"
	"os"

	"github.com/nuv-dev/nuv/internal/testsummary"
)

func main() {
	s, err := testsummary.Run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if !s.OK() {
		os.Exit(1)
	}
}
