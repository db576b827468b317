// Command stamped stands in for nuv's programs in the release tests: a program as small as can
// be that links package version, so that a test can ask it what a release compiled in (the
// companion archives' checksums) without building nuv.
package main

import (
	"fmt"

	"github.com/nuv-dev/nuv/internal/version"
)

func main() {
	fmt.Println(version.Companions)
}
