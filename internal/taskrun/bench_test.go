package taskrun_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/nuv-dev/nuv/internal/taskrun"
)

// BenchmarkMainTrivial is the in-process cost of `nuv -task ok` (Taskfile read, link directory
// check, environment overlay, one echo), without process start-up; bench/task times whole
// processes against the stock CLI.
func BenchmarkMainTrivial(b *testing.B) {
	h := newHarness(b, "exitcodes")
	for b.Loop() {
		var out, errb bytes.Buffer
		if err := taskrun.Main(context.Background(), h.env(&out, &errb), []string{"-s", "ok"}, h.opts); err != nil {
			b.Fatal(err)
		}
	}
}
