package kubecmd

import (
	"context"
	"fmt"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/kube/watch"
)

func runWatch(ctx context.Context, env *cli.Env, args []string) error {
	fs := flags("watch")
	ns := fs.StringP("namespace", "n", "", "only this namespace's pods and services (default: all)")
	lines := fs.Bool("lines", false, "print one line per change even on a terminal")
	if done, err := parse(env, fs, args); done || err != nil {
		return err
	}
	c, err := target(env, fs.Args())
	if err != nil {
		return err
	}
	cfg, err := kube.RESTConfig(c.Path)
	if err != nil {
		return err
	}
	live := !*lines && isTerminal(env.Out)
	if !live {
		fmt.Fprintf(env.Out, "watching %s (%s); Ctrl-C to stop\n", c.Name, c.Server)
	}
	return watch.Run(ctx, cfg, watch.Options{
		Namespace: *ns,
		Out:       env.Out,
		Live:      live,
		Title:     fmt.Sprintf("%s (%s, %s)", c.Name, typeText(c.Type), c.Server),
	})
}
