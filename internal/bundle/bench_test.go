package bundle

import (
	"context"
	"io"
	"path/filepath"
	"testing"
)

// BenchmarkDispatch measures nuv's own share of `nuv <folder> <task>` on the benchmark bundle
// (bench/task/bundle): loading nuvroot.json, walking the folders, parsing the nuvfiles and the
// docopt usage; the task itself is not run. Compare with the process figures of
// bench/task/bundle/dispatch.sh.
func BenchmarkDispatch(b *testing.B) {
	dir, _ := filepath.Abs("../../bench/task/bundle")
	for _, args := range [][]string{{"bench", "noop"}, {"bench", "hello", "--name=x"}} {
		b.Run(args[len(args)-1], func(b *testing.B) {
			noop := RunnerFunc(func(context.Context, Request) error { return nil })
			for i := 0; i < b.N; i++ {
				root, err := LoadRoot(dir, FromEnv)
				if err != nil {
					b.Fatal(err)
				}
				bd := &Bundle{Main: root}
				if err := bd.Dispatch(context.Background(), io.Discard, noop, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
