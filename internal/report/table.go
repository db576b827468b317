package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the end-of-run table: one line per cell with what it ran on (type and how it
// was detected, provider, nodes simulated or real, server version), the status, duration, attempts
// and failing step, then a one-line summary. A report of several targets gets a TARGET column; a
// report with the upgrade axis a PATH column (install, upgrade) and, after the table, one line per
// upgrade cell saying where it started and whether the instance kept its UID and its data.
func WriteTable(w io.Writer, r *Report) error {
	multi := len(r.Targets()) > 1
	paths := r.HasPaths()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	status := strings.ToUpper(r.Target)
	if multi {
		status = "TARGET\tSTATUS"
	}
	pathCol := ""
	if paths {
		pathCol = "PATH\t"
	}
	fmt.Fprintf(tw, "CLUSTER\t%sTYPE\tDETECTED BY\tPROVIDER\tNODES\tVERSION\t%s\tDURATION\tATTEMPTS\tFAILING STEP\n", pathCol, status)
	for _, res := range r.Results {
		step := res.FailingStep
		if step == "" && !res.Status.OK() {
			step = firstLine(res.Message)
		}
		if step == "" {
			step = "-"
		}
		typ, by, prov, nodes := orQ(res.Type), "?", "?", "?"
		if p := res.Platform; p != nil {
			by, prov = p.DetectedBy, p.Source()
			nodes = fmt.Sprintf("%d %s", p.Nodes, p.NodeKind())
		}
		st := string(res.Status)
		if res.Flaky() {
			st += " (flaky)"
		}
		if multi {
			st = r.TargetOf(res) + "\t" + st
		}
		cluster := res.Cluster
		if paths {
			cluster += "\t" + PathOf(res)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1fs\t%d\t%s\n", cluster, typ, by, prov, nodes,
			orQ(res.ServerVersion), st, res.Seconds, res.Attempts, step)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, res := range r.Results {
		if PathOf(res) != PathUpgrade {
			continue
		}
		verdict := "the upgrade path was not taken"
		if res.Upgrade != nil {
			verdict = res.Upgrade.Verdict()
		} else if r.UpgradeFrom != "" {
			verdict = "from " + r.UpgradeFrom + ": " + verdict
		}
		fmt.Fprintf(w, "upgrade on %s: %s\n", res.Cluster, verdict)
	}
	c := r.Counts()
	var parts []string
	for _, s := range []Status{Passed, Failed, TimedOut, Unreachable, Cancelled, Skipped} {
		if c[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[s], s))
		}
	}
	partial := ""
	if r.Partial {
		partial = " (partial: interrupted)"
	}
	noun := "clusters"
	if multi || paths {
		noun = "cells"
	}
	_, err := fmt.Fprintf(w, "%d %s: %s in %.1fs%s\n", len(r.Results), noun, strings.Join(parts, ", "), r.Seconds, partial)
	return err
}

func orQ(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
