package allkubes

import (
	"context"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/paths"
)

var planUsage = cli.Usage{
	Line:  "nuv all-kubes plan [flags] -- <target> [args] [-- <target> [args]]...",
	Short: "print the cells of an all-kubes run for a CI matrix",
	Long: `Prints the cells of an all-kubes run for a CI matrix: one cell per cluster (or --group of
clusters) and target, each with the exact command that runs it on one runner
(nuv all-kubes --only CLUSTERS -- TARGET) and where the runner gets each kubeconfig:
  local   a nuv local cluster (state in NUV_HOME): the runner creates it (setup)
  secret  the CI secret NUV_KUBECONFIG_<NAME>, written to clusters/<name>.kubeconfig
  file    clusters/<name>.kubeconfig is already on the runner
With --upgrade-from REF every cell takes the upgrade axis as all-kubes does: each of its clusters
runs the install cell, then the upgrade cell from REF (a git tag or commit, or an operator image);
the cells carry REF (upgradeFrom) and their command passes it on.
Each cell's job uploads its _reports/; a last job runs nuv report merge on them all, which puts
the install and upgrade paths of every cluster back into one report.
Formats (-o): github (strategy.matrix JSON, one line), gitlab (parallel:matrix YAML), json.
Example workflows: examples/github/all-kubes.yml, examples/gitlab/.gitlab-ci.yml.`,
	Examples: "nuv all-kubes plan -o github -- dtest\nnuv all-kubes plan --group type -o gitlab -- dtest -- itest\nnuv all-kubes plan --upgrade-from v1.2.0 -o github -- dtest",
}

// PlanCommand is `nuv all-kubes plan`.
func PlanCommand(_ context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("nuv all-kubes plan")
	fs.SetInterspersed(false)
	only := fs.StringSlice("only", nil, "plan only these clusters (names, comma separated)")
	exclude := fs.StringSlice("exclude", nil, "leave these clusters out")
	clusters := fs.StringSlice("clusters", nil, "the clusters, when clusters/ has no kubeconfigs (a CI plan job); their kubeconfigs come from secrets")
	upgradeFrom := fs.String("upgrade-from", "", "give every cell the upgrade axis: install at this git tag/commit (or operator image), upgrade to the working tree, then the target")
	group := fs.String("group", "", "cells of several clusters: type (one cell per cluster type) or N (N clusters a cell)")
	var output cli.OutputOption
	output.AddFlags(fs, "json", "github", "gitlab")
	output.Alias(fs, "format")
	var from string
	cli.EnumVarP(fs, &from, "kubeconfig-from", "", "auto", []string{"auto", "secret", "file"},
		"auto (local clusters created on the runner, others from secrets), secret or file")
	if done, err := cli.Parse(env, fs, planUsage, args); done || err != nil {
		return err
	}
	if err := output.Validate(planUsage); err != nil {
		return err
	}
	if fs.Changed("upgrade-from") && strings.TrimSpace(*upgradeFrom) == "" {
		return planUsage.Errorf("all-kubes plan: --upgrade-from needs a git tag, commit or operator image")
	}
	targets := splitTargets(fs.Args())
	if len(targets) == 0 {
		return planUsage.Errorf("all-kubes plan: name a target, e.g. `nuv all-kubes plan -o github -- dtest`")
	}
	home, err := paths.Home(env.Getenv)
	if err != nil {
		return err
	}
	cells, err := Plan(PlanOptions{
		Project: paths.Project(env.Getenv, env.Dir), Home: home, Targets: targets,
		Only: *only, Exclude: *exclude, Clusters: *clusters, Group: *group, From: from, UpgradeFrom: strings.TrimSpace(*upgradeFrom),
		Inv: KubeInventory{Getenv: env.Getenv}, Getenv: env.Getenv,
	})
	if err != nil {
		return err
	}
	return WritePlan(env.Out, cells, output.Format)
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
