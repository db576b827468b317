package allkubes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/lazy"
)

// A plan is the fan-out of all-kubes for a CI system: one cell per cluster (or group of clusters)
// and target, each with the exact command that runs it on one CI runner and where that runner
// gets the kubeconfig from. The CI runs the cells as a matrix, uploads each cell's _reports/ and a
// last job merges them with `nuv report merge`.

// Kubeconfig sources of a plan's cells.
const (
	// SourceFile: the runner has clusters/<name>.kubeconfig (a self-hosted runner, a cache).
	SourceFile = "file"
	// SourceSecret: the runner writes the CI secret KubeconfigSecret(name) to clusters/<name>.kubeconfig.
	SourceSecret = "secret"
	// SourceLocal: the cluster is one of nuv's local clusters; the runner creates it with Setup.
	SourceLocal = "local"
)

// Limits of the CI systems on the jobs one matrix may make.
const (
	githubMaxJobs = 256
	gitlabMaxJobs = 200
)

// Kubeconfig says where a cell's runner gets one cluster's kubeconfig.
type Kubeconfig struct {
	Cluster string `json:"cluster"`
	Source  string `json:"source"`
	// File is where the command expects it, relative to the project: clusters/<name>.kubeconfig.
	File string `json:"file"`
	// Secret is the CI secret (or variable) holding it when Source is secret.
	Secret string `json:"secret,omitempty"`
	// Setup creates the cluster on the runner when Source is local.
	Setup string `json:"setup,omitempty"`
}

// Cell is one job of the CI matrix.
type Cell struct {
	// Name is unique in the plan and safe as a job and artifact name ("<clusters>-<target>").
	Name     string   `json:"name"`
	Clusters []string `json:"clusters"`
	Group    string   `json:"group,omitempty"`
	Target   []string `json:"target"`
	// UpgradeFrom is the upgrade path the cell takes (plan --upgrade-from): on each of its clusters
	// the install cell and then the upgrade cell from this git ref or image, as all-kubes runs them.
	UpgradeFrom string `json:"upgradeFrom,omitempty"`
	// Command is the shell command that runs the cell: nuv all-kubes --only CLUSTERS
	// [--upgrade-from REF] -- TARGET.
	Command     string       `json:"command"`
	Kubeconfigs []Kubeconfig `json:"kubeconfigs"`
}

// PlanOptions configure Plan.
type PlanOptions struct {
	Project, Home string
	// Targets are the targets with their arguments (one cell per cluster or group and target).
	Targets       [][]string
	Only, Exclude []string
	// Clusters names the clusters without reading clusters/ (a CI plan job has no kubeconfigs).
	Clusters []string
	// Group: "" one cell per cluster; "type" one cell per cluster type (known without the
	// network: override or the type remembered at the last detection, else "unknown"); a number N
	// cells of N clusters.
	Group string
	// From: "auto" (local clusters made on the runner, the others from secrets), "file" or "secret".
	From string
	// UpgradeFrom gives every cell the upgrade axis (all-kubes --upgrade-from REF): each runner
	// runs its clusters' install and upgrade cells, one after the other on the same cluster, and
	// `nuv report merge` puts the two paths of every cluster back together.
	UpgradeFrom string
	Inv         Inventory
	Getenv      func(string) string
}

// KubeconfigSecret is the CI secret name for a cluster's kubeconfig: NUV_KUBECONFIG_ and the name
// in upper case with every other character than a letter or digit made "_" (valid for GitHub and
// GitLab alike).
func KubeconfigSecret(cluster string) string {
	var b strings.Builder
	b.WriteString("NUV_KUBECONFIG_")
	for _, r := range strings.ToUpper(cluster) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// localState is the part of a local cluster's state (NUV_HOME/clusters/<name>/state.json) a plan
// needs to recreate it on a runner.
type localState struct {
	Name       string `json:"name"`
	Provider   string `json:"provider"`
	Flavor     string `json:"flavor"`
	Nodes      int    `json:"nodes"`
	HA         bool   `json:"ha"`
	Kubeconfig string `json:"kubeconfig"`
}

func readLocalState(home, name string) (*localState, bool) {
	if home == "" {
		return nil, false
	}
	data, err := os.ReadFile(filepath.Join(home, "clusters", name, "state.json"))
	if err != nil {
		return nil, false
	}
	var s localState
	if json.Unmarshal(data, &s) != nil || s.Name != name || s.Provider != "local" {
		return nil, false
	}
	return &s, true
}

// Plan computes the cells.
func Plan(o PlanOptions) ([]Cell, error) {
	if len(o.Targets) == 0 {
		return nil, cli.Usagef("all-kubes plan: name a target, e.g. `nuv all-kubes plan -- dtest`")
	}
	switch o.From {
	case "", "auto", SourceFile, SourceSecret:
	default:
		return nil, cli.Usagef("all-kubes plan: --kubeconfig-from %q: use auto, file or secret", o.From)
	}
	var all []Cluster
	if len(o.Clusters) > 0 {
		for _, n := range o.Clusters {
			if strings.TrimSpace(n) == "" {
				return nil, cli.Usagef("all-kubes plan: --clusters has an empty name")
			}
			all = append(all, Cluster{Name: strings.TrimSpace(n)})
		}
	} else {
		if o.Inv == nil {
			return nil, fmt.Errorf("all-kubes plan: no cluster inventory")
		}
		var err error
		if all, err = o.Inv.List(o.Project); err != nil {
			return nil, fmt.Errorf("list clusters: %w", err)
		}
	}
	clusters, err := filter(all, o.Only, o.Exclude)
	if err != nil {
		return nil, err
	}
	if len(clusters) == 0 {
		return nil, fmt.Errorf("no clusters to plan (none in %s; name them with --clusters)", filepath.Join(o.Project, "clusters"))
	}
	groups, err := o.group(clusters)
	if err != nil {
		return nil, err
	}
	var cells []Cell
	seen := map[string]bool{}
	for _, t := range o.Targets {
		for _, g := range groups {
			names := g.names
			cell := Cell{Clusters: names, Group: g.name, Target: t, UpgradeFrom: o.UpgradeFrom}
			label := strings.Join(names, "+")
			if g.name != "" {
				label = g.name
			}
			cell.Name = jobName(label + "-" + strings.Join(t, "-"))
			for i := 2; seen[cell.Name]; i++ {
				cell.Name = fmt.Sprintf("%s-%d", jobName(label+"-"+strings.Join(t, "-")), i)
			}
			seen[cell.Name] = true
			cmd := []string{"nuv", "all-kubes", "--only", strings.Join(names, ",")}
			if o.UpgradeFrom != "" {
				cmd = append(cmd, "--upgrade-from", o.UpgradeFrom)
			}
			cell.Command = shellJoin(append(append(cmd, "--"), t...))
			for _, n := range names {
				cell.Kubeconfigs = append(cell.Kubeconfigs, o.source(n))
			}
			cells = append(cells, cell)
		}
	}
	return cells, nil
}

type group struct {
	name  string
	names []string
}

func (o PlanOptions) group(cs []Cluster) ([]group, error) {
	switch {
	case o.Group == "":
		var out []group
		for _, c := range cs {
			out = append(out, group{names: []string{c.Name}})
		}
		return out, nil
	case o.Group == "type":
		by := map[string][]string{}
		for _, c := range cs {
			t := c.Type
			if t == "" && c.Kubeconfig != "" {
				t = kube.Remembered(o.Project, c.Name, c.Kubeconfig)
			}
			if t == "" {
				t = "unknown"
			}
			by[t] = append(by[t], c.Name)
		}
		var types []string
		for t := range by {
			types = append(types, t)
		}
		sort.Strings(types)
		var out []group
		for _, t := range types {
			out = append(out, group{name: t, names: by[t]})
		}
		return out, nil
	}
	var n int
	if _, err := fmt.Sscanf(o.Group, "%d", &n); err != nil || n <= 0 || fmt.Sprint(n) != o.Group {
		return nil, cli.Usagef("all-kubes plan: --group %q: use type (one cell per cluster type) or a number N (cells of N clusters)", o.Group)
	}
	var out []group
	for i := 0; i < len(cs); i += n {
		g := group{name: fmt.Sprintf("group%d", i/n+1)}
		for _, c := range cs[i:min(i+n, len(cs))] {
			g.names = append(g.names, c.Name)
		}
		out = append(out, g)
	}
	return out, nil
}

func (o PlanOptions) source(name string) Kubeconfig {
	k := Kubeconfig{Cluster: name, File: "clusters/" + name + ".kubeconfig"}
	switch o.From {
	case SourceFile:
		k.Source = SourceFile
	case SourceSecret:
		k.Source, k.Secret = SourceSecret, KubeconfigSecret(name)
	default:
		if s, ok := readLocalState(o.Home, name); ok {
			args := []string{"nuv", "cluster", "create", "local", "--name", name}
			if s.Flavor != "" {
				args = append(args, "--flavor", s.Flavor)
			}
			if s.Nodes > 1 {
				args = append(args, "--nodes", fmt.Sprint(s.Nodes))
			}
			if s.HA {
				args = append(args, "--ha")
			}
			k.Source, k.Setup = SourceLocal, shellJoin(args)
		} else {
			k.Source, k.Secret = SourceSecret, KubeconfigSecret(name)
		}
	}
	return k
}

var unsafeJob = lazy.MustCompile(`[^a-zA-Z0-9_.-]+`)

func jobName(s string) string { return strings.Trim(unsafeJob.ReplaceAllString(s, "_"), "_") }

var plainWord = lazy.MustCompile(`^[A-Za-z0-9_./:=,@%+-]+$`)

// shellJoin quotes words for a POSIX shell.
func shellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		if plainWord.MatchString(w) {
			q[i] = w
		} else {
			q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// githubCell is one include entry of a GitHub Actions matrix: flat strings a workflow reads as
// matrix.<key>. kubeconfig_secret is set for single-cluster cells whose kubeconfig is a secret
// (read as secrets[matrix.kubeconfig_secret]); kubeconfig_secrets pairs every file with its
// secret ("clusters/a.kubeconfig=NUV_KUBECONFIG_A ..."); setup creates the local clusters.
type githubCell struct {
	Name              string `json:"name"`
	Clusters          string `json:"clusters"`
	Target            string `json:"target"`
	Command           string `json:"command"`
	KubeconfigSource  string `json:"kubeconfig_source"`
	KubeconfigFile    string `json:"kubeconfig_file"`
	KubeconfigSecret  string `json:"kubeconfig_secret"`
	KubeconfigSecrets string `json:"kubeconfig_secrets"`
	Setup             string `json:"setup"`
	UpgradeFrom       string `json:"upgrade_from,omitempty"`
}

func flat(c Cell) githubCell {
	g := githubCell{Name: c.Name, Clusters: strings.Join(c.Clusters, ","), Target: shellJoin(c.Target), Command: c.Command, UpgradeFrom: c.UpgradeFrom}
	var srcs, files, secrets, setups []string
	for _, k := range c.Kubeconfigs {
		srcs = append(srcs, k.Source)
		files = append(files, k.File)
		if k.Secret != "" {
			secrets = append(secrets, k.File+"="+k.Secret)
		}
		if k.Setup != "" {
			setups = append(setups, k.Setup)
		}
	}
	g.KubeconfigSource = strings.Join(dedup(srcs), ",")
	g.KubeconfigFile = strings.Join(files, " ")
	g.KubeconfigSecrets = strings.Join(secrets, " ")
	if len(c.Kubeconfigs) == 1 {
		g.KubeconfigSecret = c.Kubeconfigs[0].Secret
	}
	g.Setup = strings.Join(setups, " && ")
	return g
}

func dedup(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// WritePlan writes the cells as format: "json" ({"cells": [...]}, indented), "github" (a
// strategy.matrix object {"include": [...]} on one line, for $GITHUB_OUTPUT and fromJSON) or
// "gitlab" (a `parallel: matrix:` YAML fragment, one entry of NUV_* variables per cell).
func WritePlan(w io.Writer, cells []Cell, format string) error {
	switch format {
	case "json", "":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"cells": cells})
	case "github":
		if len(cells) > githubMaxJobs {
			return fmt.Errorf("all-kubes plan: %d cells, but a GitHub Actions matrix makes at most %d jobs: use --group", len(cells), githubMaxJobs)
		}
		inc := make([]githubCell, len(cells))
		for i, c := range cells {
			inc[i] = flat(c)
		}
		data, err := json.Marshal(map[string]any{"include": inc})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", data)
		return err
	case "gitlab":
		if len(cells) > gitlabMaxJobs {
			return fmt.Errorf("all-kubes plan: %d cells, but a GitLab parallel:matrix makes at most %d jobs: use --group", len(cells), gitlabMaxJobs)
		}
		var entries []map[string]string
		for _, c := range cells {
			g := flat(c)
			e := map[string]string{
				"NUV_CELL": g.Name, "NUV_CLUSTERS": g.Clusters, "NUV_TARGET": g.Target, "NUV_COMMAND": g.Command,
				"NUV_KUBECONFIG_SOURCE": g.KubeconfigSource, "NUV_KUBECONFIG_FILE": g.KubeconfigFile,
				"NUV_KUBECONFIG_SECRETS": g.KubeconfigSecrets, "NUV_SETUP": g.Setup,
			}
			if g.UpgradeFrom != "" {
				e["NUV_UPGRADE_FROM"] = g.UpgradeFrom
			}
			entries = append(entries, e)
		}
		data, err := yaml.Marshal(map[string]any{"parallel": map[string]any{"matrix": entries}})
		if err != nil {
			return err
		}
		var b bytes.Buffer
		b.WriteString("# nuv all-kubes plan: one job per cell; indent under a job to use it\n")
		b.Write(data)
		_, err = w.Write(b.Bytes())
		return err
	}
	return cli.Usagef("all-kubes plan: -o %q: use github, gitlab or json", format)
}
