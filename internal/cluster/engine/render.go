package engine

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/history"
	"github.com/nuv-dev/nuv/internal/cluster/pricing"
)

// WritePlan prints a plan the way a person reads it: one line per resource (+ create, ~ update,
// -/+ replace, - delete, ! conflict) with the fields that change, then a summary line.
func WritePlan(w io.Writer, p *cluster.Plan) {
	if p.Empty() {
		fmt.Fprintf(w, "cluster %s (%s): no changes; it matches the spec (%d resource(s) up to date)\n", p.Cluster, p.Provider, p.Unchanged)
		return
	}
	fmt.Fprintf(w, "cluster %s (%s):\n", p.Cluster, p.Provider)
	for _, c := range p.Changes {
		switch c.Action {
		case cluster.Create:
			fmt.Fprintf(w, "  + create %s\n", c.Key)
			for _, f := range c.Fields {
				fmt.Fprintf(w, "      %s: %s\n", f.Field, f.New)
			}
		case cluster.Update:
			fmt.Fprintf(w, "  ~ update %s%s\n", c.Key, idNote(actualID(c)))
			for _, f := range c.Fields {
				fmt.Fprintf(w, "      %s: %s -> %s\n", f.Field, show(f.Old), show(f.New))
			}
		case cluster.Replace:
			fmt.Fprintf(w, "-/+ replace %s%s\n", c.Key, idNote(actualID(c)))
			if c.Reason != "" {
				fmt.Fprintf(w, "      why: %s\n", c.Reason)
			}
			for _, f := range c.Fields {
				forces := ""
				if f.ForcesReplace {
					forces = "  (forces replacement)"
				}
				fmt.Fprintf(w, "      %s: %s -> %s%s\n", f.Field, show(f.Old), show(f.New), forces)
			}
		case cluster.Delete:
			fmt.Fprintf(w, "  - delete %s%s\n", c.Key, idNote(actualID(c)))
			if c.Reason != "" {
				fmt.Fprintf(w, "      why: %s\n", c.Reason)
			}
		case cluster.Conflict:
			fmt.Fprintf(w, "  ! conflict %s%s: exists but was not made by nuv; left alone\n", c.Key, idNote(actualID(c)))
		}
	}
	fmt.Fprintf(w, "Plan: %d to create, %d to update, %d to replace, %d to delete", p.Count(cluster.Create), p.Count(cluster.Update), p.Count(cluster.Replace), p.Count(cluster.Delete))
	if n := p.Count(cluster.Conflict); n > 0 {
		fmt.Fprintf(w, ", %d in conflict", n)
	}
	fmt.Fprintf(w, "; %d unchanged.\n", p.Unchanged)
}

func actualID(c cluster.Change) string {
	if c.Actual == nil {
		return ""
	}
	return c.Actual.ID
}

func show(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

// WriteEstimates prints how long applying p is expected to take, per change and in total, from
// est and total (Engine.Estimates). Nothing for an empty plan.
func WriteEstimates(w io.Writer, p *cluster.Plan, est []history.Estimate, total history.Total) {
	if p.Empty() || len(est) != len(p.Changes) {
		return
	}
	fmt.Fprintf(w, "Expected apply time of cluster %s, from the recorded applies of provider %s:\n", p.Cluster, p.Provider)
	width := len("total")
	for _, c := range p.Changes {
		width = max(width, len(c.Action)+1+len(c.Key))
	}
	for i, c := range p.Changes {
		fmt.Fprintf(w, "  %-*s  %s\n", width, string(c.Action)+" "+c.Key, est[i])
	}
	fmt.Fprintf(w, "  %-*s  %s\n", width, "total", total)
}

// WriteCosts prints a plan's hourly cost estimate (Engine.Costs): a line per change whose resource
// runs machines, with the count, the type, the unit price and its source, then the total, labelled
// an estimate. Nothing when no change runs priced machines (local and kind clusters). now gives the
// age of cached prices.
func WriteCosts(w io.Writer, p *cluster.Plan, est pricing.Estimate, now time.Time) {
	if est.Empty() {
		return
	}
	fmt.Fprintf(w, "Estimated hourly cost of cluster %s (on-demand list prices of the machines the changes run, from the cloud's price API; an estimate, not a bill):\n", p.Cluster)
	width := 0
	for _, l := range est.Lines {
		width = max(width, len(l.Change))
	}
	for _, l := range est.Lines {
		for i, it := range l.Items {
			label := l.Change
			if i > 0 {
				label = ""
			}
			if it.Price == nil {
				fmt.Fprintf(w, "  %-*s  %s\n", width, label, it.Describe(now))
				continue
			}
			fmt.Fprintf(w, "  %-*s  estimate: %s\n", width, label, it.Describe(now))
		}
	}
	if len(est.Sources()) == 0 {
		fmt.Fprintf(w, "  estimated cost: no price (none of the machine types has one)\n")
		return
	}
	note := strings.Join(est.Sources(), "; ")
	if est.Unpriced > 0 {
		note += "; "
		note += fmt.Sprintf("%d of the machine types without a price, not counted", est.Unpriced)
	}
	fmt.Fprintf(w, "  estimated cost: %s (%s)\n", pricing.Dollars(est.USDPerHour), note)
}

// jsonChange is a change in `-o json`.
type jsonChange struct {
	Action string                `json:"action"`
	Key    string                `json:"resource"`
	ID     string                `json:"id,omitempty"`
	Fields []cluster.FieldChange `json:"fields,omitempty"`
	Reason string                `json:"reason,omitempty"`
}

type jsonPlan struct {
	Cluster   string       `json:"cluster"`
	Provider  string       `json:"provider"`
	Changes   []jsonChange `json:"changes"`
	Unchanged int          `json:"unchanged"`
}

// WritePlansJSON prints plans as a JSON list.
func WritePlansJSON(w io.Writer, plans []*cluster.Plan) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(PlansMachine(plans))
}

// PlansMachine is plans in their machine form (`nuv cluster plan -o json|yaml`): a list of
// {cluster, provider, unchanged, changes: [{action, key, id, fields, reason}]}, stable field names.
func PlansMachine(plans []*cluster.Plan) any {
	out := make([]jsonPlan, 0, len(plans))
	for _, p := range plans {
		jp := jsonPlan{Cluster: p.Cluster, Provider: p.Provider, Unchanged: p.Unchanged, Changes: []jsonChange{}}
		for _, c := range p.Changes {
			jp.Changes = append(jp.Changes, jsonChange{Action: string(c.Action), Key: c.Key, ID: actualID(c), Fields: c.Fields, Reason: c.Reason})
		}
		out = append(out, jp)
	}
	return out
}

// Summary is one line saying what an apply did.
func Summary(p *cluster.Plan) string {
	if p.Empty() {
		return fmt.Sprintf("cluster %s: no changes", p.Cluster)
	}
	var parts []string
	for _, a := range []cluster.Action{cluster.Create, cluster.Update, cluster.Replace, cluster.Delete} {
		if n := p.Count(a); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, done(a)))
		}
	}
	return fmt.Sprintf("cluster %s: %s", p.Cluster, strings.Join(parts, ", "))
}
