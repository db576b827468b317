package clustercmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/local"
)

func runStop(ctx context.Context, env *cli.Env, p local.Provider, args []string) error {
	return forEach(ctx, env, p, "stop", args, p.Stop, "stopped")
}

func runStart(ctx context.Context, env *cli.Env, p local.Provider, args []string) error {
	return forEach(ctx, env, p, "start", args, p.Start, "running")
}

func runDelete(ctx context.Context, env *cli.Env, p local.Provider, args []string) error {
	return forEach(ctx, env, p, "delete", args, p.Delete, "deleted")
}

// forEach runs op on NAME...|--all, reporting each; any failure makes the command fail.
func forEach(ctx context.Context, env *cli.Env, p local.Provider, verb string, args []string,
	op func(context.Context, string) error, done string) error {
	fs := flags(env, verb)
	all := fs.Bool("all", false, "every local cluster")
	if err := parse(fs, args); err != nil {
		return err
	}
	list, err := names(p, fs.Args(), *all, verb)
	if err != nil {
		return err
	}
	// Clusters are independent: work on them in parallel, report in order.
	results := make([]error, len(list))
	var wg sync.WaitGroup
	for i, n := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = op(ctx, n)
		}()
	}
	wg.Wait()
	var errs []error
	for i, n := range list {
		if results[i] != nil {
			errs = append(errs, notFound(p, results[i]))
			continue
		}
		fmt.Fprintf(env.Out, "%s %s\n", n, done)
	}
	return errors.Join(errs...)
}

func runLogs(ctx context.Context, env *cli.Env, p local.Provider, args []string) error {
	fs := flags(env, "logs")
	tail := fs.IntP("tail", "n", -1, "print only the last N lines (default: all for one component, 20 each otherwise)")
	fs.Lookup("tail").DefValue = "0" // the usage line above says what the default is
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return cli.Usagef("nuv cluster logs: usage: nuv cluster logs NAME [COMPONENT]")
	}
	name := fs.Arg(0)
	dir := local.StateDir(p.Home, name)
	if _, err := os.Stat(dir); err != nil {
		return notFound(p, fmt.Errorf("logs %q: %w", name, cluster.ErrNotFound))
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
	sort.Strings(logs)
	var comps []string
	for _, l := range logs {
		comps = append(comps, strings.TrimSuffix(filepath.Base(l), ".log"))
	}
	if fs.NArg() == 2 {
		c := fs.Arg(1)
		path := filepath.Join(dir, "logs", c+".log")
		if _, err := os.Stat(path); err != nil {
			return cli.Usagef("nuv cluster logs: cluster %s has no component %q (valid: %s)", name, c, strings.Join(comps, ", "))
		}
		return printTail(env, path, *tail)
	}
	n := *tail
	if n < 0 {
		n = 20
	}
	for _, c := range comps {
		fmt.Fprintf(env.Out, "==> %s <==\n", c)
		if err := printTail(env, filepath.Join(dir, "logs", c+".log"), n); err != nil {
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

func runKubeconfig(ctx context.Context, env *cli.Env, p local.Provider, args []string) error {
	fs := flags(env, "kubeconfig")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("nuv cluster kubeconfig: name one cluster")
	}
	info, err := p.Status(ctx, fs.Arg(0))
	if err != nil {
		return notFound(p, err)
	}
	if info.Err != nil {
		return info.Err
	}
	fmt.Fprintln(env.Out, info.Kubeconfig)
	return nil
}

func runPrepare(ctx context.Context, env *cli.Env, p local.Provider, args []string) error {
	fs := flags(env, "prepare")
	prune := fs.Bool("prune", false, "also remove older companion builds no running cluster uses")
	source := fs.String("source", "", "where the binaries come from: download (official releases, verified), build (from source), or a DIR of binaries (default: NUV_KUBE_BIN, the cache, download, build)")
	offline := fs.Bool("offline", false, "never touch the network: the cache, or a build from the Go module cache")
	version := fs.String("version", local.KubeVersion, "Kubernetes version")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return cli.Usagef("nuv cluster prepare: unexpected argument %q", fs.Arg(0))
	}
	comp := local.Companion{Getenv: env.Getenv, Log: env.Log}
	bins, err := comp.Prepare(ctx, local.PrepareOptions{Source: *source, Offline: *offline, Version: *version})
	if err != nil {
		return err
	}
	bin := bins.Path
	env.Log.Infof("binaries: %s", bins.Source)
	if *prune {
		removed, err := comp.Prune(bin)
		for _, r := range removed {
			env.Log.Infof("removed %s", r)
		}
		if err != nil {
			return err
		}
	}
	if st, err := os.Stat(bin); err == nil && st.IsDir() {
		out, err := exec.CommandContext(ctx, filepath.Join(bin, "kube-apiserver"), "--version").Output()
		if err != nil {
			return fmt.Errorf("verify %s: %w", bin, err)
		}
		f := strings.Fields(string(out))
		fmt.Fprintf(env.Out, "binaries %s\t%s\n", f[len(f)-1], bin)
		return nil
	}
	out, err := exec.CommandContext(ctx, bin, "version").Output()
	if err != nil {
		return fmt.Errorf("verify %s: %w", bin, err)
	}
	fmt.Fprintf(env.Out, "nuv-kube %s\t%s\n", strings.TrimSpace(string(out)), bin)
	return nil
}
