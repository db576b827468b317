package allkubes

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/paths"
)

const planUsage = `Usage: nuv all-kubes plan [flags] -- <target> [args] [-- <target> [args]]...

Prints the cells of an all-kubes run for a CI matrix: one cell per cluster (or --group of
clusters) and target, each with the exact command that runs it on one runner
(nuv all-kubes --only CLUSTERS -- TARGET) and where the runner gets each kubeconfig:
  local   a nuv local cluster (state in NUV_HOME): the runner creates it (setup)
  secret  the CI secret NUV_KUBECONFIG_<NAME>, written to clusters/<name>.kubeconfig
  file    clusters/<name>.kubeconfig is already on the runner
Each cell's job uploads its _reports/; a last job runs nuv report merge on them all.
Formats: github (strategy.matrix JSON, one line), gitlab (parallel:matrix YAML), json.
Example workflows: examples/github/all-kubes.yml, examples/gitlab/.gitlab-ci.yml.

Flags:
`

func PlanCommand(_ context.Context, env *cli.Env, args []string) error {
	fs := pflag.NewFlagSet("all-kubes plan", pflag.ContinueOnError)
	fs.SetOutput(env.Err)
	fs.SetInterspersed(false)
	only := fs.StringSlice("only", nil, "plan only these clusters (names, comma separated)")
	exclude := fs.StringSlice("exclude", nil, "leave these clusters out")
	clusters := fs.StringSlice("clusters", nil, "the clusters, when clusters/ has no kubeconfigs (a CI plan job); their kubeconfigs come from secrets")
	group := fs.String("group", "", "cells of several clusters: type (one cell per cluster type) or N (N clusters a cell)")
	format := fs.String("format", "json", "github, gitlab or json")
	from := fs.String("kubeconfig-from", "auto", "auto (local clusters created on the runner, others from secrets), secret or file")
	fs.Usage = func() {
		fmt.Fprint(env.Err, planUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return cli.Usagef("all-kubes plan: %v", err)
	}
	targets := splitTargets(fs.Args())
	if len(targets) == 0 {
		fs.Usage()
		return cli.Usagef("all-kubes plan: name a target, e.g. `nuv all-kubes plan --format github -- dtest`")
	}
	home, err := paths.Home(env.Getenv)
	if err != nil {
		return err
	}
	cells, err := Plan(PlanOptions{
		Project: paths.Project(env.Getenv, env.Dir), Home: home, Targets: targets,
		Only: *only, Exclude: *exclude, Clusters: *clusters, Group: *group, From: *from,
		Inv: KubeInventory{Getenv: env.Getenv}, Getenv: env.Getenv,
	})
	if err != nil {
		return err
	}
	return WritePlan(env.Out, cells, *format)
}

// splitTargets splits the words after the first -- into targets at each further --.
func splitTargets(words []string) [][]string {
	var out [][]string
	var cur []string
	for _, w := range words {
		if w == "--" {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, w)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
