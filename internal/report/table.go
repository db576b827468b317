package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the end-of-run table: one line per cluster with the target's status, duration,
// attempts and failing step, then a one-line summary.
func WriteTable(w io.Writer, r *Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "CLUSTER\tTYPE\t%s\tDURATION\tATTEMPTS\tFAILING STEP\n", strings.ToUpper(r.Target))
	for _, res := range r.Results {
		step := res.FailingStep
		if step == "" && !res.Status.OK() {
			step = firstLine(res.Message)
		}
		if step == "" {
			step = "-"
		}
		typ := res.Type
		if typ == "" {
			typ = "?"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1fs\t%d\t%s\n", res.Cluster, typ, res.Status, res.Seconds, res.Attempts, step)
	}
	if err := tw.Flush(); err != nil {
		return err
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
	_, err := fmt.Fprintf(w, "%d clusters: %s in %.1fs%s\n", len(r.Results), strings.Join(parts, ", "), r.Seconds, partial)
	return err
}
