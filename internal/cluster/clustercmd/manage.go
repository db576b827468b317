package clustercmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
)

func runStop(ctx context.Context, c *cmdCtx, args []string) error {
	return c.forEach(ctx, "stop", args, func(s cluster.Starter) func(context.Context, string) error { return s.Stop }, "stopped")
}

func runStart(ctx context.Context, c *cmdCtx, args []string) error {
	return c.forEach(ctx, "start", args, func(s cluster.Starter) func(context.Context, string) error { return s.Start }, "running")
}

// forEach runs a Starter verb on NAME...|--all, in parallel, reporting in order; a cluster whose
// provider cannot do the verb is an error naming the provider.
func (c *cmdCtx) forEach(ctx context.Context, verb string, args []string,
	op func(cluster.Starter) func(context.Context, string) error, done string) error {
	fs := flags(c.env, verb)
	all := fs.Bool("all", false, "every cluster that can be "+done)
	if err := parse(fs, args); err != nil {
		return err
	}
	var list []string
	if *all {
		if fs.NArg() > 0 {
			return cli.Usagef("nuv cluster %s: give cluster names or --all, not both", verb)
		}
		for _, p := range c.providers {
			if _, ok := p.(cluster.Starter); !ok {
				continue
			}
			infos, err := p.List(ctx)
			if err != nil {
				return err
			}
			for _, i := range infos {
				list = append(list, i.Name)
			}
		}
		sort.Strings(list)
	} else {
		var err error
		if list, err = c.names(ctx, fs.Args(), false, verb); err != nil {
			return err
		}
	}
	results := make([]error, len(list))
	var wg sync.WaitGroup
	for i, n := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, _, err := c.find(ctx, n)
			if err != nil {
				results[i] = err
				return
			}
			s, ok := p.(cluster.Starter)
			if !ok {
				results[i] = fmt.Errorf("%s %s: %w: %s clusters cannot be stopped or started by nuv", verb, n, cluster.ErrUnsupported, p.Name())
				return
			}
			results[i] = op(s)(ctx, n)
		}()
	}
	wg.Wait()
	var errs []error
	for i, n := range list {
		if results[i] != nil {
			errs = append(errs, c.notFound(ctx, results[i]))
			continue
		}
		fmt.Fprintf(c.env.Out, "%s %s\n", n, done)
	}
	return errors.Join(errs...)
}

func runLogs(ctx context.Context, c *cmdCtx, args []string) error {
	fs := flags(c.env, "logs")
	tail := fs.IntP("tail", "n", -1, "print only the last N lines (default: all for one component, 20 each otherwise)")
	fs.Lookup("tail").DefValue = "0" // the usage line above says what the default is
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return cli.Usagef("nuv cluster logs: usage: nuv cluster logs NAME [COMPONENT]")
	}
	name := fs.Arg(0)
	p, _, err := c.find(ctx, name)
	if err != nil {
		return err
	}
	src, ok := p.(cluster.LogSource)
	if !ok {
		return fmt.Errorf("logs %s: %w: %s keeps no component logs on this machine", name, cluster.ErrUnsupported, p.Name())
	}
	files, err := src.LogFiles(ctx, name)
	if err != nil {
		return c.notFound(ctx, err)
	}
	var comps []string
	for k := range files {
		comps = append(comps, k)
	}
	sort.Strings(comps)
	if fs.NArg() == 2 {
		comp := fs.Arg(1)
		path, ok := files[comp]
		if !ok {
			return cli.Usagef("nuv cluster logs: cluster %s has no component %q (valid: %s)", name, comp, strings.Join(comps, ", "))
		}
		return printTail(c.env, path, *tail)
	}
	n := *tail
	if n < 0 {
		n = 20
	}
	for _, comp := range comps {
		fmt.Fprintf(c.env.Out, "==> %s <==\n", comp)
		if err := printTail(c.env, files[comp], n); err != nil {
			return err
		}
	}
	return nil
}

func printTail(env *cli.Env, path string, n int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	if n >= 0 {
		lines := strings.SplitAfter(string(b), "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		b = []byte(strings.Join(lines, ""))
	}
	_, err = env.Out.Write(b)
	return err
}

func runKubeconfig(ctx context.Context, c *cmdCtx, args []string) error {
	fs := flags(c.env, "kubeconfig")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("nuv cluster kubeconfig: name one cluster")
	}
	_, info, err := c.find(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	if info.Err != nil {
		return info.Err
	}
	fmt.Fprintln(c.env.Out, info.Kubeconfig)
	return nil
}
