package bundlecmd

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/taskrun"
)

// BenchmarkDispatch compares, in one process, `nuv bench noop` through bundle dispatch with the
// same task run directly by taskrun (what `nuv -task -t .../nuvfile.yml noop` does): the difference
// is bundle dispatch's own cost (discovery, config merge, folder walk, docopt, .env).
func BenchmarkDispatch(b *testing.B) {
	root, _ := filepath.Abs("../../../bench/task/bundle")
	home := b.TempDir()
	vars := map[string]string{"NUV_ROOT": root, "NUV_HOME": home}
	env := &cli.Env{Streams: cli.Streams{Out: io.Discard, Err: io.Discard}, Log: cli.Quiet(),
		Getenv: func(k string) string { return vars[k] }, Dir: home}
	s := Setup{Env: env, Version: "bench"}
	ctx := context.Background()
	b.Run("taskrun-direct", func(b *testing.B) {
		opts := taskrun.Options{Dir: filepath.Join(root, "bench"), Entrypoint: filepath.Join(root, "bench", "nuvfile.yml")}
		for i := 0; i < b.N; i++ {
			if err := taskrun.Run(ctx, env, opts, []taskrun.Call{{Task: "noop"}}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bundle-dispatch", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			cfg, err := s.ConfigEnv()
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Dispatch(ctx, taskrun.Options{Env: cfg}, []string{"bench", "noop"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
