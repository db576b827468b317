package kubecmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/paths"
)

func runList(ctx context.Context, env *cli.Env, args []string) error {
	fs := flags("list")
	offline := fs.Bool("offline", false, "do not contact the API servers (type from overrides and earlier detections)")
	var output cli.OutputOption
	output.AddFlags(fs, cli.FormatTable, cli.FormatJSON, cli.FormatYAML)
	timeout := timeoutFlag(env, fs)
	if done, err := parse(env, fs, args); done || err != nil {
		return err
	}
	if err := output.Validate(cli.Usage{Line: "nuv kube list [--offline] [-o table|json|yaml] [--timeout D]"}); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("nuv kube list: unexpected argument %q", fs.Arg(0))
	}
	proj := project(env)
	cs, err := kube.ListEnv(proj, env.Getenv)
	if err != nil {
		return err
	}
	var sts []kube.Status
	if !*offline {
		sts = kube.ProbeAll(ctx, proj, cs, *timeout, env.Getenv)
	}
	if output.Machine() {
		_, err := output.Write(env.Out, listed(cs, sts))
		return err
	}
	WriteTable(env.Out, proj, cs, sts)
	writeNotes(env, proj, cs)
	return nil
}

// WriteTable prints the inventory: one numbered row per cluster, the selected one marked with *,
// then the reasons of invalid kubeconfigs. sts (same order as cs) may be nil (offline). An empty
// inventory prints how to add a cluster.
func WriteTable(w io.Writer, project string, cs []kube.Cluster, sts []kube.Status) {
	if len(cs) == 0 {
		fmt.Fprintf(w, "No clusters in %s/.\n", paths.Clusters(project))
		fmt.Fprintln(w, "  Create a local one:   nuv cluster create local   (or: task local:create)")
		fmt.Fprintf(w, "  Or add a kubeconfig:  cp path/to/kubeconfig %s/<name>.kubeconfig\n", paths.Clusters(project))
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\t#\tNAME\tTYPE\tSTATUS\tCONTEXT\tSERVER")
	var invalid []string
	for i, c := range cs {
		mark := ""
		if c.Selected {
			mark = "*"
		}
		typ, status := c.Type, "-"
		if typ == "" {
			typ = "?"
		}
		if sts != nil {
			status = statusText(sts[i])
			if sts[i].Type != "" {
				typ = sts[i].Type
			}
		}
		if c.Err != nil {
			typ, status = "-", "invalid"
			invalid = append(invalid, fmt.Sprintf("  %d %s: %v", c.Index, c.Name, c.Err))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", mark, c.Index, c.Name, typ, status, dash(c.Context), dash(c.Server))
	}
	tw.Flush()
	if len(invalid) > 0 {
		fmt.Fprintln(w, "Invalid kubeconfigs (the others work):")
		fmt.Fprintln(w, strings.Join(invalid, "\n"))
	}
}

func statusText(st kube.Status) string {
	switch {
	case st.Reachable && st.Err != nil:
		return "reachable (nodes not readable)"
	case st.Reachable:
		ready := 0
		for _, n := range st.Nodes {
			if n.Ready {
				ready++
			}
		}
		return fmt.Sprintf("ready %d/%d nodes", ready, len(st.Nodes))
	case st.Err != nil:
		return "unreachable: " + st.Err.Error()
	}
	return "-"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeNotes tells where the selection comes from when it is not the plain project selection.
func writeNotes(env *cli.Env, proj string, cs []kube.Cluster) {
	if v := env.Getenv(kube.EnvCluster); v != "" {
		fmt.Fprintf(env.Out, "(selected for this shell by %s=%s, which wins over the project selection)\n", kube.EnvCluster, v)
		return
	}
	if len(cs) == 0 {
		return
	}
	if _, err := kube.Selected(proj, env.Getenv); err != nil {
		fmt.Fprintf(env.Out, "(%v)\n", err)
	}
}

type jsonCluster struct {
	Index     int      `json:"index"`
	Name      string   `json:"name"`
	Path      string   `json:"path"`
	Context   string   `json:"context,omitempty"`
	Server    string   `json:"server,omitempty"`
	Type      string   `json:"type,omitempty"`
	Selected  bool     `json:"selected"`
	Invalid   string   `json:"invalid,omitempty"`
	Reachable *bool    `json:"reachable,omitempty"`
	Error     string   `json:"error,omitempty"`
	Nodes     []string `json:"nodes,omitempty"`
}

// listed is the inventory as -o json and -o yaml print it.
func listed(cs []kube.Cluster, sts []kube.Status) []jsonCluster {
	out := make([]jsonCluster, 0, len(cs))
	for i, c := range cs {
		j := jsonCluster{Index: c.Index, Name: c.Name, Path: c.Path, Context: c.Context, Server: c.Server, Type: c.Type, Selected: c.Selected}
		if c.Err != nil {
			j.Invalid = c.Err.Error()
		} else if sts != nil {
			r := sts[i].Reachable
			j.Reachable = &r
			if sts[i].Type != "" {
				j.Type = sts[i].Type
			}
			if sts[i].Err != nil {
				j.Error = sts[i].Err.Error()
			}
			for _, n := range sts[i].Nodes {
				j.Nodes = append(j.Nodes, n.Name)
			}
		}
		out = append(out, j)
	}
	return out
}
