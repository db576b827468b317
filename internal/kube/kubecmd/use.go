package kubecmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kube"
)

func runUse(ctx context.Context, env *cli.Env, args []string) error {
	fs := flags("use")
	offline := fs.Bool("offline", false, "do not contact the API server (type from override or earlier detection)")
	shell := fs.Bool("shell", false, `print shell exports for this shell only: eval "$(nuv kube use N --shell)"`)
	global := fs.Bool("global", false, "also merge the context into ~/.kube/config (a backup is kept)")
	none := fs.Bool("none", false, "clear the selection")
	timeout := timeoutFlag(env, fs)
	if done, err := parse(env, fs, args); done || err != nil {
		return err
	}
	proj := project(env)
	if *none {
		if fs.NArg() > 0 {
			return cli.Usagef("nuv kube use --none takes no cluster")
		}
		if *shell {
			fmt.Fprintln(env.Out, "unset NUV_CLUSTER KUBECONFIG KUBE")
			return nil
		}
		if err := kube.Unselect(proj); err != nil {
			return err
		}
		fmt.Fprintln(env.Out, "no cluster selected for this project")
		return nil
	}
	cs, err := kube.ListEnv(proj, env.Getenv)
	if err != nil {
		return err
	}
	if fs.NArg() == 0 {
		// `task use` without N: the list.
		if *shell {
			return cli.Usagef("nuv kube use --shell: which cluster? give a number or a name")
		}
		return runList(ctx, env, offlineArgs(*offline))
	}
	if fs.NArg() > 1 {
		return cli.Usagef("nuv kube use: one cluster, got %d arguments", fs.NArg())
	}
	c, err := kube.Find(cs, fs.Arg(0))
	if err != nil {
		WriteTable(env.Err, proj, cs, nil)
		return cli.Usagef("%v (selection unchanged)", err)
	}
	if c.Err != nil {
		WriteTable(env.Err, proj, cs, nil)
		return cli.Exit(cli.ExitFailure, fmt.Errorf("cluster %d %s is invalid, selection unchanged: %w", c.Index, c.Name, c.Err))
	}
	// Type and nodes: the override wins; else detect now (unless offline); else the last detection.
	typ := c.Type
	var st *kube.Status
	if !*offline {
		s := kube.Probe(ctx, proj, c, *timeout, env.Getenv)
		st = &s
		if s.Type != "" {
			typ = s.Type
		}
	}
	info := env.Out
	if *shell {
		info = env.Err // stdout is for eval
		fmt.Fprintf(env.Out, "export %s=%s KUBECONFIG=%s KUBE=%s\n", kube.EnvCluster, shellQuote(c.Path), shellQuote(c.Path), shellQuote(typ))
	} else {
		if err := kube.Select(proj, c, typ); err != nil {
			return err
		}
		if v := env.Getenv(kube.EnvCluster); v != "" && v != c.Name && v != c.Path {
			env.Log.Warnf("%s=%s in this shell wins over the project selection; `unset %s` (or eval \"$(nuv kube use --none --shell)\") to follow it", kube.EnvCluster, v, kube.EnvCluster)
		} else if env.Getenv(kube.EnvKubeconfig) == "" {
			// Nothing in this shell can win over the selection just made.
		} else if t, err := kube.Resolve(proj, "", env.Getenv); err == nil && t.Source == kube.FromKubeconfig {
			env.Log.Warnf("%s=%s in this shell wins over the project selection, for kubectl and nuv; eval \"$(nuv kube env)\" (or unset %s) to follow it", kube.EnvKubeconfig, env.Getenv(kube.EnvKubeconfig), kube.EnvKubeconfig)
		}
	}
	scope := "this project"
	if *shell {
		scope = "this shell"
	}
	fmt.Fprintf(info, "selected %d %s for %s: type %s, context %s, server %s\n", c.Index, c.Name, scope, typeText(typ), c.Context, c.Server)
	if st != nil {
		switch {
		case st.Reachable && st.Err == nil:
			fmt.Fprintf(info, "nodes: %s\n", kube.NodeSummary(st.Nodes))
		case st.Reachable:
			fmt.Fprintf(info, "nodes: not readable with these credentials\n")
		default:
			fmt.Fprintf(info, "unreachable: %v\n", st.Err)
		}
	}
	if *global {
		dest, err := kube.GlobalKubeconfig(env.Getenv)
		if err != nil {
			return err
		}
		name, backup, err := kube.MergeGlobal(dest, c)
		if err != nil {
			return fmt.Errorf("--global: %w", err)
		}
		fmt.Fprintf(info, "merged context %s into %s (current-context)", name, dest)
		if backup != "" {
			fmt.Fprintf(info, "; previous content saved as %s", backup)
		}
		fmt.Fprintln(info)
	}
	return nil
}

func typeText(t string) string {
	if t == "" {
		return "unknown (not detected yet)"
	}
	return t
}

func offlineArgs(offline bool) []string {
	if offline {
		return []string{"--offline"}
	}
	return nil
}

func runDetect(ctx context.Context, env *cli.Env, args []string) error {
	fs := flags("detect")
	timeout := timeoutFlag(env, fs)
	if done, err := parse(env, fs, args); done || err != nil {
		return err
	}
	c, err := target(env, fs.Args())
	if err != nil {
		return err
	}
	t := *timeout
	if t < 5*kube.DefaultProbeTimeout {
		t = 5 * kube.DefaultProbeTimeout // detection is asked for explicitly: give the server time
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	typ, err := kube.DetectCluster(ctx, project(env), c, env.Getenv)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Out, typ)
	return nil
}

func runCurrent(_ context.Context, env *cli.Env, args []string) error {
	fs := flags("current")
	if done, err := parse(env, fs, args); done || err != nil {
		return err
	}
	c, err := kube.Selected(project(env), env.Getenv)
	if err != nil {
		return cli.Exit(cli.ExitFailure, err)
	}
	fmt.Fprintf(env.Out, "%s\t%s\t%s\n", c.Name, dash(c.Type), c.Path)
	return nil
}

// target resolves an optional N|NAME argument, defaulting to the selected cluster.
func target(env *cli.Env, args []string) (kube.Cluster, error) {
	proj := project(env)
	switch len(args) {
	case 0:
		c, err := kube.Selected(proj, env.Getenv)
		if err != nil {
			return c, cli.Exit(cli.ExitFailure, err)
		}
		return c, nil
	case 1:
		cs, err := kube.ListEnv(proj, env.Getenv)
		if err != nil {
			return kube.Cluster{}, err
		}
		c, err := kube.Find(cs, args[0])
		if err != nil {
			WriteTable(env.Err, proj, cs, nil)
			return c, cli.Usagef("%v", err)
		}
		if c.Err != nil {
			return c, fmt.Errorf("cluster %d %s is invalid: %w", c.Index, c.Name, c.Err)
		}
		return c, nil
	}
	return kube.Cluster{}, cli.Usagef("one cluster at most, got %d arguments", len(args))
}

// runEnv prints the export that makes kubectl (and every client) in this shell follow the
// project's selection: KUBECONFIG=<project>/.nuv/kubeconfig, the link `use` maintains. It is
// typed once per shell (or kept in .envrc); `task N` and `nuv kube use N` then switch kubectl with
// no further step, and ~/.kube/config is never read or written for this project.
func runEnv(_ context.Context, env *cli.Env, args []string) error {
	fs := flags("env")
	tasks := fs.Bool("tasks", false, "print the variables every task gets for the selection instead (KEY=VALUE lines; a selection that cannot be used fails with the reason)")
	if done, err := parse(env, fs, args); done || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("nuv kube env takes no arguments")
	}
	proj := project(env)
	if *tasks {
		// what the task program asks for a kubeconfig only client-go reads (taskprog.KubeEnv)
		vars, err := kube.SelectionEnv(proj, env.Getenv)
		for _, kv := range vars {
			fmt.Fprintln(env.Out, kv)
		}
		return err
	}
	link, err := filepath.Abs(kube.ProjectKubeconfig(proj))
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Out, "export KUBECONFIG=%s\n", shellQuote(link))
	if _, err := os.Stat(link); err != nil {
		env.Log.Warnf("no cluster selected yet: `task N` (or `nuv kube use N`) makes %s point at it", link)
	}
	return nil
}
