package bundlecmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nuv-dev/nuv/internal/bundle"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/config"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/update"
)

const resetUsage = `Usage: nuv -reset [--plugins] [--config] [--all]

Remove the bundle downloaded by -update (and its lock file) and the extracted embedded bundle, so
the next run starts from the bundle compiled into nuv. Clusters and their state are never touched.

  --plugins   also remove every installed plugin
  --config    also remove ~/.nuv/config.json
  --all       both of the above
`

func resetTool(_ context.Context, s Setup, args []string) error {
	fs := newFlags("-reset")
	plugins := fs.Bool("plugins", false, "remove plugins")
	cfg := fs.Bool("config", false, "remove config.json")
	all := fs.Bool("all", false, "plugins and config too")
	if done, err := parse(fs, s, resetUsage, "nuv -reset\nnuv -reset --plugins --config", args); done || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("nuv -reset: takes no arguments\nUsage: nuv -reset [--plugins] [--config] [--all]")
	}
	home, err := paths.Home(s.Env.Getenv)
	if err != nil {
		return err
	}
	dl := bundle.HomeDir(home, s.Version)
	targets := []string{dl, update.LockPath(dl), filepath.Join(home, "cache", "bundle")}
	if *plugins || *all {
		ps, err := bundle.Plugins(home)
		if err != nil {
			return err
		}
		for _, p := range ps {
			targets = append(targets, p.Dir, update.LockPath(p.Dir))
		}
	}
	if *cfg || *all {
		targets = append(targets, config.Path(home))
	}
	for _, t := range targets {
		if _, err := os.Lstat(t); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := os.RemoveAll(t); err != nil {
			return fmt.Errorf("reset: remove %s: %w", t, err)
		}
		fmt.Fprintf(s.Env.Out, "removed %s\n", t)
	}
	return nil
}
