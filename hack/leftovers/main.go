// Command leftovers finds the containers, volumes and networks a test run left on the container
// runtimes it started (see package internal/leftover). hack/test.sh runs
//
//	leftovers snapshot FILE RUNTIME...   before the tests: what each runtime (docker, podman) has
//	leftovers check FILE                 when it ends: what appeared since, named; exit 1 if any
//
// in an environment that selects its own runtimes (DOCKER_HOST, CONTAINERS_CONF).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/nuv-dev/nuv/internal/leftover"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	ctx := context.Background()
	switch {
	case len(args) >= 3 && args[0] == "snapshot":
		var rts []leftover.Runtime
		for _, n := range args[2:] {
			rts = append(rts, leftover.Runtime{Name: n})
		}
		s, err := leftover.Take(ctx, rts)
		if err == nil {
			err = s.Save(args[1])
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "leftovers:", err)
			return 1
		}
		for _, rt := range rts {
			fmt.Printf("%s has %d containers, volumes and networks before the tests\n", rt.Name, len(s[rt.Name]))
		}
		return 0
	case len(args) == 2 && args[0] == "check":
		before, err := leftover.Load(args[1])
		if err == nil {
			var left map[string][]leftover.Object
			if left, err = leftover.Left(ctx, before); err == nil {
				lines := leftover.Report(left)
				if len(lines) == 0 {
					fmt.Println("the tests left no container, volume or network")
					return 0
				}
				fmt.Fprintf(os.Stderr, "the tests left %d containers, volumes or networks behind:\n", len(lines))
				for _, l := range lines {
					fmt.Fprintln(os.Stderr, "  "+l)
				}
				return 1
			}
		}
		fmt.Fprintln(os.Stderr, "leftovers:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "usage: leftovers snapshot FILE RUNTIME... | leftovers check FILE")
	return 2
}
