// Package clusterview renders what `nuv cluster list` and `nuv cluster status NAME` print: the
// table (with the wide columns for -o wide), one cluster's status with its binaries, durability
// and components, and the machine form of -o json|yaml (stable field names). Both programs that
// answer these verbs use it, nuv's full program (package clustercmd) and the slim front (package
// front), so their output is the same byte for byte. It links nothing beyond package cluster's
// types and does nothing at init.
package clusterview

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/clustercache"
)

// Table prints clusters as a table; now makes AGE (and a cached answer's age) deterministic in
// tests. wide adds the flavor, version, HA and kubeconfig columns.
func Table(w io.Writer, infos []cluster.Info, now time.Time, wide bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// EXPIRES appears when some cluster has a time to live (spec.ttl), as kubectl adds columns
	// that only some objects fill; "-" for the others.
	expires := slices.ContainsFunc(infos, func(i cluster.Info) bool { return i.ExpiresAt != nil })
	head := "NAME\tPROVIDER\tSTATUS\tAPI\tNODES\tAGE"
	if expires {
		head += "\tEXPIRES"
	}
	if wide {
		head += "\tFLAVOR\tVERSION\tHA\tKUBECONFIG"
	}
	fmt.Fprintln(tw, head)
	for _, i := range infos {
		api, nodes, age := i.APIURL, "-", "-"
		if api == "" {
			api = "-"
		}
		if i.NodesReady >= 0 {
			nodes = fmt.Sprintf("%d/%d", i.NodesReady, i.Nodes)
		} else if i.Nodes > 0 {
			nodes = "?/" + strconv.Itoa(i.Nodes)
		}
		if !i.Created.IsZero() {
			age = HumanAge(now.Sub(i.Created))
		}
		status := string(i.Status)
		if i.Status == cluster.Degraded {
			var down []string
			for _, c := range i.Components {
				if !c.Running {
					down = append(down, c.Name)
				}
			}
			if len(down) > 0 {
				status += " (down: " + strings.Join(down, ",") + ")"
			}
		}
		if i.Phase != "" && i.Phase != "running" {
			status += " [" + i.Phase + "]"
		}
		if !i.CachedAt.IsZero() {
			status += " (" + clustercache.Age(i.CachedAt, now) + ")"
		}
		if i.Err != nil {
			status += ": " + i.Err.Error()
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", i.Name, i.Provider, status, api, nodes, age)
		if expires {
			row += "\t" + expiresIn(i.ExpiresAt, now)
		}
		if wide {
			row += fmt.Sprintf("\t%s\t%s\t%t\t%s", Dash(i.Flavor), Dash(i.Version), i.HA, Dash(i.Kubeconfig))
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
}

// Status prints one cluster: its table row (wide: with the wide columns), then its binaries,
// durability and components.
func Status(w io.Writer, i cluster.Info, now time.Time, wide bool) {
	Table(w, []cluster.Info{i}, now, wide)
	if i.Binaries != "" {
		fmt.Fprintf(w, "\nbinaries: %s\n", i.Binaries)
	}
	if i.Durability != "" {
		fmt.Fprintf(w, "durability: %s\n", i.Durability)
	}
	if len(i.Components) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tSTATE\tPID\tPORT")
	for _, c := range i.Components {
		st := "down"
		if c.Running {
			st = "running"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", c.Name, st, c.PID, c.Port)
	}
	tw.Flush()
}

// expiresIn is "in 3h", "expired 20m ago" or "-" (no time to live).
func expiresIn(at *time.Time, now time.Time) string {
	switch {
	case at == nil:
		return "-"
	case at.After(now):
		return "in " + HumanAge(at.Sub(now))
	}
	return "expired " + HumanAge(now.Sub(*at)) + " ago"
}

// Dash is s, or "-" for the empty string (a table cell with nothing to say).
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// HumanAge is d as kubectl shows ages: 42s, 5m, 3h, 4d.
func HumanAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// Machine is one cluster in its machine form (-o json|yaml): stable field names.
type Machine struct {
	Name       string              `json:"name"`
	Provider   string              `json:"provider"`
	Status     string              `json:"status"`
	Phase      string              `json:"phase,omitempty"`
	Error      string              `json:"error,omitempty"`
	API        string              `json:"api,omitempty"`
	Kubeconfig string              `json:"kubeconfig,omitempty"`
	Flavor     string              `json:"flavor,omitempty"`
	Version    string              `json:"version,omitempty"`
	HA         bool                `json:"ha,omitempty"`
	Nodes      int                 `json:"nodes"`
	NodesReady int                 `json:"nodesReady"`
	Created    *time.Time          `json:"created,omitempty"`
	CreatedBy  string              `json:"createdBy,omitempty"`
	ExpiresAt  *time.Time          `json:"expiresAt,omitempty"`
	Binaries   string              `json:"binaries,omitempty"`
	Durability string              `json:"durability,omitempty"`
	Components []cluster.Component `json:"components,omitempty"`
	// CachedAt is when the cloud gave this answer, for one from nuv's cache (absent: asked now).
	CachedAt *time.Time `json:"cachedAt,omitempty"`
}

// Machines are clusters in their machine form (a list, never null).
func Machines(infos []cluster.Info) []Machine {
	out := make([]Machine, 0, len(infos))
	for _, i := range infos {
		out = append(out, MachineOf(i))
	}
	return out
}

// MachineOf is cluster i in its machine form.
func MachineOf(i cluster.Info) Machine {
	j := Machine{Name: i.Name, Provider: i.Provider, Status: string(i.Status), Phase: i.Phase, ExpiresAt: i.ExpiresAt, API: i.APIURL, Kubeconfig: i.Kubeconfig,
		Flavor: i.Flavor, Version: i.Version, HA: i.HA, Nodes: i.Nodes, NodesReady: i.NodesReady, Binaries: i.Binaries, Durability: i.Durability, Components: i.Components, CreatedBy: i.CreatedBy}
	if i.Err != nil {
		j.Error = i.Err.Error()
	}
	if !i.Created.IsZero() {
		c := i.Created
		j.Created = &c
	}
	if !i.CachedAt.IsZero() {
		c := i.CachedAt.UTC()
		j.CachedAt = &c
	}
	return j
}
