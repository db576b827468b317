package kubecmd

import (
	"context"
	"fmt"
	"io"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kube"
	"k8s.io/client-go/rest"
)

// WatchOptions is what `nuv kube watch` asks its Watcher to show.
type WatchOptions struct {
	// Namespace limits pods and services to one namespace ("" for all).
	Namespace string
	// Out receives the view; Live redraws it in place (a terminal), else one line per change.
	Out  io.Writer
	Live bool
	// Title names the cluster at the top of the live view.
	Title string
}

// Watcher shows nodes, pods and services of the cluster cfg reaches until ctx ends. The watch is
// injected (package watch, informers of client-go's typed clientset) so that this package does
// not link it: the slim front runs `nuv kube` in-process and hands `watch` to the full program.
type Watcher func(ctx context.Context, cfg *rest.Config, o WatchOptions) error

func runWatch(ctx context.Context, env *cli.Env, args []string, watcher Watcher) error {
	if watcher == nil {
		return fmt.Errorf("watch is answered by nuv's full program")
	}
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
	return watcher(ctx, cfg, WatchOptions{
		Namespace: *ns,
		Out:       env.Out,
		Live:      live,
		Title:     fmt.Sprintf("%s (%s, %s)", c.Name, typeText(c.Type), c.Server),
	})
}
