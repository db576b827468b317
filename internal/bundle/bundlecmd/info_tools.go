package bundlecmd

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/nuv-dev/nuv/internal/bundle"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/config"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/taskrun"
)

// Info is what -info prints.
type Info struct {
	Version     string            `json:"version"`
	TaskVersion string            `json:"taskVersion,omitempty"`
	Bundle      *BundleInfo       `json:"bundle,omitempty"`
	BundleError string            `json:"bundleError,omitempty"`
	Plugins     []BundleInfo      `json:"plugins,omitempty"`
	Home        string            `json:"home"`
	Project     string            `json:"project"`
	Cluster     map[string]string `json:"cluster,omitempty"`
	// KubeBinaries is how local clusters get their Kubernetes binaries.
	KubeBinaries string            `json:"kubeBinaries,omitempty"`
	Config       map[string]string `json:"config"`
	ConfigError  string            `json:"configError,omitempty"`
}

// BundleInfo describes one bundle root.
type BundleInfo struct {
	Dir     string `json:"dir"`
	Source  string `json:"source"`
	Version string `json:"version,omitempty"`
	Name    string `json:"name,omitempty"`
}

const infoUsage = "Usage: nuv -info [-o table|json|yaml]\n\nShow nuv's version, the bundle in use and where it was found, NUV_HOME, the project root, the\nmerged configuration (secret values as ***) and the selected cluster.\n"

func infoTool(_ context.Context, s Setup, args []string) error {
	fs := newFlags("-info")
	var output cli.OutputOption
	output.AddFlags(fs, cli.FormatTable, cli.FormatJSON, cli.FormatYAML)
	if done, err := parse(fs, s, infoUsage, "nuv -info\nnuv -info -o json", args); done || err != nil {
		return err
	}
	home, err := paths.Home(s.Env.Getenv)
	if err != nil {
		return err
	}
	in := Info{Version: s.Version, TaskVersion: taskrun.TaskVersion(), Home: home, Project: paths.Project(s.Env.Getenv, s.Env.Dir), Config: map[string]string{}}
	if b, err := s.Locate(); err != nil {
		in.BundleError = err.Error()
	} else {
		in.Bundle = &BundleInfo{Dir: b.Main.Dir, Source: string(b.Main.Source), Version: b.Main.Version}
		for _, p := range b.Plugins {
			in.Plugins = append(in.Plugins, BundleInfo{Dir: p.Dir, Source: string(p.Source), Version: p.Version, Name: p.Name})
		}
	}
	cfg, err := s.Merged()
	if err != nil && in.BundleError == "" {
		in.ConfigError = err.Error()
	}
	m := mask(SecretsOf(cfg))
	for k, v := range config.Flatten(cfg) {
		in.Config[k] = m(k, v)
	}
	if s.KubeEnv != nil {
		for _, kv := range s.KubeEnv() {
			if k, v, ok := strings.Cut(kv, "="); ok {
				if in.Cluster == nil {
					in.Cluster = map[string]string{}
				}
				in.Cluster[k] = m(k, v)
			}
		}
	}
	if s.KubeBinaries != nil {
		in.KubeBinaries = s.KubeBinaries()
	}
	if err := output.Validate(cli.Usage{}); err != nil {
		return err
	}
	if ok, err := output.Write(s.Env.Out, in); ok {
		return err
	}
	w := s.Env.Out
	fmt.Fprintf(w, "version:  %s", in.Version)
	if in.TaskVersion != "" {
		fmt.Fprintf(w, " (go-task %s)", in.TaskVersion)
	}
	fmt.Fprintln(w)
	if in.Bundle != nil {
		fmt.Fprintf(w, "bundle:   %s (%s", in.Bundle.Dir, in.Bundle.Source)
		if in.Bundle.Version != "" {
			fmt.Fprintf(w, ", version %s", in.Bundle.Version)
		}
		fmt.Fprintln(w, ")")
	} else {
		fmt.Fprintf(w, "bundle:   none (%s)\n", in.BundleError)
	}
	for _, p := range in.Plugins {
		fmt.Fprintf(w, "plugin:   %s (%s)\n", p.Name, p.Dir)
	}
	fmt.Fprintf(w, "home:     %s\n", in.Home)
	fmt.Fprintf(w, "project:  %s\n", in.Project)
	if len(in.Cluster) == 0 {
		fmt.Fprintln(w, "cluster:  none selected")
	} else {
		for _, k := range sortedKeys(in.Cluster) {
			fmt.Fprintf(w, "cluster:  %s=%s\n", k, in.Cluster[k])
		}
	}
	if in.KubeBinaries != "" {
		fmt.Fprintf(w, "binaries: %s\n", in.KubeBinaries)
	}
	if in.ConfigError != "" {
		fmt.Fprintf(w, "config:   error: %s\n", in.ConfigError)
	} else if len(in.Config) == 0 {
		fmt.Fprintln(w, "config:   (empty)")
	} else {
		fmt.Fprintln(w, "config:")
		for _, k := range sortedKeys(in.Config) {
			fmt.Fprintf(w, "  %s=%s\n", k, in.Config[k])
		}
	}
	if in.ConfigError != "" {
		return cli.Exit(cli.ExitFailure, nil)
	}
	return nil
}

const tasksUsage = "Usage: nuv -tasks [-o table|wide|json|yaml]\n\nList every task of the bundle and its plugins as the command line that runs it.\n"

func tasksTool(_ context.Context, s Setup, args []string) error {
	fs := newFlags("-tasks")
	var output cli.OutputOption
	output.AddFlags(fs)
	if done, err := parse(fs, s, tasksUsage, "nuv -tasks\nnuv -tasks -o json", args); done || err != nil {
		return err
	}
	b, err := s.Locate()
	if err != nil {
		return err
	}
	lines, err := b.Tasks()
	if err != nil {
		return err
	}
	if err := output.Validate(cli.Usage{}); err != nil {
		return err
	}
	if lines == nil {
		lines = []bundle.TaskLine{}
	}
	if ok, err := output.Write(s.Env.Out, lines); ok {
		return err
	}
	tw := tabwriter.NewWriter(s.Env.Out, 0, 4, 2, ' ', 0)
	for _, l := range lines {
		note := l.Desc
		if l.Plugin != "" {
			note += " [plugin " + l.Plugin + "]"
		}
		if l.Shadowed {
			note += " [shadowed by a built-in command]"
		}
		fmt.Fprintf(tw, "%s\t%s\n", l.Command, strings.TrimSpace(note))
	}
	return tw.Flush()
}
