// Command reap stops the processes recorded under the directories it is given (see package
// internal/reap) and says how many it stopped. hack/test.sh runs it on its test directory when it
// ends, whatever happened; a failure to stop one exits 1.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nuv-dev/nuv/internal/reap"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: reap DIR...")
		os.Exit(2)
	}
	code := 0
	for _, dir := range os.Args[1:] {
		stopped, err := reap.Stop(context.Background(), dir, 5*time.Second)
		for _, p := range stopped {
			fmt.Printf("  stopped pid %d (%s)\n", p.PID, p.File)
		}
		fmt.Printf("stopped %d processes left running under %s\n", len(stopped), dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "reap:", err)
			code = 1
		}
	}
	os.Exit(code)
}
