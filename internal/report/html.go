package report

import (
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// htmlPage is the static report page a person reads: a summary, a legend, then the matrix with one
// row per cluster and one column per test (each target, then each step any cluster reported for
// it). A cell is coloured by status (pass, fail, flaky, skip, timeout, unreachable, cancelled),
// shows its duration as a bar scaled to the slowest cell, and a cell that did not pass is itself a
// link to its failure artifacts (log beside it). The row header says what the cluster truly is:
// type and how it was detected, provider, server version, node count, and a visible "simulated"
// badge (striped row header) when its nodes are kwok nodes. Provenance of every cell (machine, nuv,
// commit, time, retries, superseded duplicates) and skipped report directories follow the grid.
// With the upgrade axis (all-kubes --upgrade-from) the columns are grouped by path under a header
// row (install, upgrade from REF): each cluster's row shows both paths side by side, the upgrade
// cell says whether the instance kept its UID and its data, and an "Upgrade" table after the grid
// lists per cluster the version and images before and after and what the upgrade changed.
// No scripts, no external assets: it opens from a CI artifact as well as from disk. It is parsed
// on the first render, not when nuv starts.
var htmlPage = lazy.Value[*template.Template]{New: func() *template.Template {
	return template.Must(template.New("index").Parse(htmlPageSource))
}}

const htmlPageSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>nuv all-kubes {{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; }
h1 { font-size: 1.4em; margin: 0 0 .3em; }
.summary span.count { display: inline-block; padding: .15em .6em; margin-right: .4em; border-radius: 1em; color: #fff; font-weight: 600; }
.legend span { display: inline-block; padding: .1em .5em; margin-right: .3em; border-radius: .3em; font-size: .85em; }
table.grid { border-collapse: separate; border-spacing: 3px; margin-top: 1em; }
table.grid th { text-align: left; font-weight: 600; padding: .3em .5em; background: #eef0f3; vertical-align: bottom; }
table.grid th.cluster { min-width: 15em; vertical-align: top; }
th.cluster .meta { font-weight: 400; font-size: .8em; color: #444; margin-top: .2em; }
th.cluster.simulated { background: repeating-linear-gradient(135deg, #eef0f3, #eef0f3 8px, #dfe3ea 8px, #dfe3ea 16px); }
.badge { display: inline-block; font-size: .72em; font-weight: 700; padding: .05em .45em; border-radius: .3em; margin-left: .3em; vertical-align: middle; }
.badge.simulated { background: #6b4fbb; color: #fff; }
.badge.real { background: #1f6feb; color: #fff; }
.badge.mixed { background: #9a6700; color: #fff; }
.badge.empty { background: #cf222e; color: #fff; }
td.cell { min-width: 7.5em; padding: .3em .5em; border-radius: .3em; vertical-align: top; font-size: .9em; }
td.cell a.open { color: inherit; text-decoration: none; display: block; }
td.cell a.open:hover { text-decoration: underline; }
td.cell .st { font-weight: 700; }
td.cell .links { font-size: .8em; margin-top: .2em; }
td.cell .links a { color: inherit; }
td.cell .why { font-size: .78em; margin-top: .15em; max-width: 18em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.bar { height: 6px; background: rgba(0,0,0,.12); border-radius: 3px; margin-top: .3em; }
.bar span { display: block; height: 6px; background: rgba(0,0,0,.55); border-radius: 3px; min-width: 2px; }
.passed { background: #2da44e; color: #fff; }
.failed { background: #cf222e; color: #fff; }
.flaky { background: #e3a008; color: #1d1d1f; }
.skipped { background: #d0d7de; color: #1d1d1f; }
.timeout { background: #bc4c00; color: #fff; }
.unreachable { background: #57606a; color: #fff; }
.cancelled { background: #8c959f; color: #fff; }
.none { background: #f6f8fa; color: #8c959f; }
table.prov { border-collapse: collapse; margin-top: .5em; font-size: .85em; }
table.prov th, table.prov td { border-bottom: 1px solid #d0d7de; padding: .25em .6em; text-align: left; }
tr.paths th.path { text-align: center; background: #dde3ea; }
tr.paths th.path.upgrade { background: #d8d0f0; }
td.cell .upg { font-size: .78em; margin-top: .15em; font-weight: 600; }
table.upgrade { border-collapse: collapse; margin-top: .5em; font-size: .85em; }
table.upgrade th, table.upgrade td { border-bottom: 1px solid #d0d7de; padding: .25em .6em; text-align: left; vertical-align: top; }
td.kept { color: #1a7f37; font-weight: 700; }
td.lost { color: #cf222e; font-weight: 700; }
.warn { background: #fff8c5; border: 1px solid #d4a72c; padding: .5em .8em; margin: 1em 0; border-radius: .3em; }
</style>
</head>
<body>
<h1>nuv all-kubes {{.Title}}</h1>
<p class="summary" id="summary">{{range .Counts}}<span class="count {{.Status}}" data-status="{{.Status}}">{{.N}} {{.Status}}</span>{{end}}
{{.Cells}} cells over {{.Clusters}} clusters, started {{.Started}}, {{.Seconds}} s.{{if .Partial}} <strong>Partial report: the run was interrupted.</strong>{{end}}</p>
{{if .Skipped}}<div class="warn" id="skipped"><strong>Report directories not merged:</strong><ul>{{range .Skipped}}<li><code>{{.Dir}}</code>: {{.Reason}}</li>{{end}}</ul></div>{{end}}
<p class="legend"><span class="passed">pass</span><span class="failed">fail</span><span class="flaky">flaky (passed on a retry)</span><span class="skipped">skip</span><span class="timeout">timeout</span><span class="unreachable">unreachable</span><span class="cancelled">cancelled</span> &middot; bars: duration relative to the slowest cell ({{.Max}} s) &middot; striped row: simulated (kwok) nodes &middot; <span class="badge empty">empty</span>: the cluster has no nodes</p>
<table class="grid" id="grid">
{{if .PathGroups}}<tr class="paths"><th></th>{{range .PathGroups}}<th class="path {{.Path}}" colspan="{{.Span}}" data-path="{{.Path}}">{{.Label}}</th>{{end}}</tr>
{{end}}<tr><th>cluster</th>{{range .Columns}}<th class="test{{if .Step}} step{{end}}"{{if .Path}} data-path="{{.Path}}"{{end}} data-target="{{.Target}}" data-step="{{.Step}}">{{if .Step}}{{.Step}}{{else}}{{.Target}}{{end}}</th>{{end}}</tr>
{{range .Rows}}<tr data-cluster="{{.Cluster}}">
<th class="cluster {{.Kind}}" data-nodes="{{.Kind}}"><span class="name">{{.Cluster}}</span>{{if .Kind}}<span class="badge {{.Kind}}">{{.Kind}}</span>{{end}}
<div class="meta">type <b class="type">{{.Type}}</b>{{if .DetectedBy}} by {{.DetectedBy}}{{if .Evidence}} (<code>{{.Evidence}}</code>){{end}}{{end}}<br>{{.Platform}}{{if .Version}} &middot; {{.Version}}{{end}}</div></th>
{{range .Cells}}<td class="cell {{.Class}}"{{if .Path}} data-path="{{.Path}}"{{end}} data-target="{{.Target}}" data-step="{{.Step}}" data-status="{{.Class}}" data-seconds="{{.Seconds}}" title="{{.Message}}">{{if eq .Class "none"}}&ndash;{{else}}{{if .Open}}<a class="open" href="{{.Open}}">{{end}}<span class="st">{{.Label}}</span> {{.Seconds}} s{{if .Open}}</a>{{end}}
<div class="bar"><span style="width: {{.Pct}}%"></span></div>{{if .Upgrade}}<div class="upg">{{.Upgrade}}</div>{{end}}{{if .Why}}<div class="why">{{.Why}}</div>{{end}}{{if or .Log .Artifacts}}<div class="links">{{if .Artifacts}}<a class="artifacts" href="{{.Artifacts}}/">artifacts</a> {{end}}{{if .Log}}<a class="log" href="{{.Log}}">log</a>{{end}}</div>{{end}}{{end}}</td>
{{end}}</tr>
{{end}}</table>
{{if .Upgrades}}<h2>Upgrade</h2>
<table class="upgrade" id="upgrade">
<tr><th>cluster</th><th>from</th><th>commit</th><th>operator before</th><th>operator after</th><th>instance</th><th>uid</th><th>data</th><th>changed by the upgrade</th></tr>
{{range .Upgrades}}<tr data-cluster="{{.Cluster}}"><td>{{.Cluster}}</td>{{with .U}}<td>{{.From}}</td><td><code>{{.Commit}}</code></td><td><code>{{.FromImage}}</code></td><td><code>{{.ToImage}}</code></td><td>{{.Instance}}</td><td class="uid {{if .UIDKept}}kept{{else}}lost{{end}}">{{if .UIDKept}}kept{{else if .UID}}NOT kept{{else}}not checked{{end}}</td><td class="data {{.Data}}">{{if .Data}}{{.Data}}{{else}}not checked{{end}}</td><td>{{range .Changed}}<div class="changed">{{.}}</div>{{end}}</td>{{else}}<td colspan="8">the upgrade path was not taken{{if $.UpgradeFrom}} (from {{$.UpgradeFrom}}){{end}}</td>{{end}}</tr>
{{end}}</table>
{{end}}<h2>Provenance</h2>
<table class="prov" id="provenance">
<tr><th>cluster</th><th>target</th>{{if .PathGroups}}<th>path</th>{{end}}<th>run</th><th>machine</th><th>nuv</th><th>commit</th><th>started</th><th>ended</th><th>retries</th><th>superseded</th></tr>
{{range .Prov}}<tr data-cluster="{{.Cluster}}" data-target="{{.Target}}"><td>{{.Cluster}}</td><td>{{.Target}}</td>{{if $.PathGroups}}<td>{{.Path}}</td>{{end}}<td>{{.P.Run}}{{if .P.CIJob}} <a href="{{.P.CIJob}}">CI job</a>{{end}}</td><td>{{.P.Machine}}</td><td>{{.P.Nuv}}</td><td>{{.P.Commit}}</td><td>{{.Start}}</td><td>{{.End}}</td><td>{{.P.Retries}}</td><td>{{range .Sup}}<div class="superseded">{{.}}</div>{{end}}</td></tr>
{{end}}</table>
</body>
</html>
`

type htmlColumn struct{ Path, Target, Step string }

type htmlPathGroup struct {
	Path, Label string
	Span        int
}

type htmlUpgrade struct {
	Cluster string
	U       *Upgrade
}

type htmlCell struct {
	Path, Target, Step, Class, Label, Message, Why, Upgrade string
	Seconds                                                 string
	Pct                                                     float64
	Open, Log, Artifacts                                    string
}

type htmlRow struct {
	Cluster, Type, DetectedBy, Evidence, Platform, Version, Kind string
	Cells                                                        []htmlCell
}

type htmlCount struct {
	N      int
	Status string
}

type htmlProv struct {
	Cluster, Target, Path, Start, End string
	P                                 Provenance
	Sup                               []string
}

// WriteHTML writes the report page.
func WriteHTML(w io.Writer, r *Report) error {
	hasPaths := r.HasPaths()
	colPath := func(res Result) string {
		if !hasPaths {
			return ""
		}
		return PathOf(res)
	}
	cols, groups := htmlColumns(r, colPath)
	var upgrades []htmlUpgrade
	max := 0.0
	for _, res := range r.Results {
		if res.Seconds > max {
			max = res.Seconds
		}
		for _, s := range res.Steps {
			if s.Seconds > max {
				max = s.Seconds
			}
		}
	}
	pct := func(s float64) float64 {
		if max <= 0 {
			return 0
		}
		return float64(int(s/max*1000+0.5)) / 10
	}
	var rows []htmlRow
	index := map[string]int{}
	var provs []htmlProv
	for _, res := range r.Results {
		i, ok := index[res.Cluster]
		if !ok {
			i = len(rows)
			index[res.Cluster] = i
			row := htmlRow{Cluster: res.Cluster, Type: orQ(res.Type), Version: res.ServerVersion, Platform: "platform unknown"}
			if p := res.Platform; p != nil {
				row.DetectedBy, row.Evidence, row.Platform, row.Kind = p.DetectedBy, p.Evidence, p.Label(), p.NodeKind()
			}
			row.Cells = make([]htmlCell, len(cols))
			for j, c := range cols {
				row.Cells[j] = htmlCell{Path: c.Path, Target: c.Target, Step: c.Step, Class: "none"}
			}
			rows = append(rows, row)
		}
		target := r.TargetOf(res)
		if PathOf(res) == PathUpgrade {
			upgrades = append(upgrades, htmlUpgrade{Cluster: res.Cluster, U: res.Upgrade})
		}
		for j, c := range cols {
			if c.Target != target || c.Path != colPath(res) {
				continue
			}
			fillCell(&rows[i].Cells[j], c, res, pct)
		}
		if res.Provenance != nil {
			hp := htmlProv{Cluster: res.Cluster, Target: target, Path: PathOf(res), P: *res.Provenance,
				Start: stamp(res.Provenance.Started), End: stamp(res.Provenance.Ended)}
			for _, sp := range res.Superseded {
				hp.Sup = append(hp.Sup, fmt.Sprintf("%s on %s, ended %s", sp.Run, sp.Machine, stamp(sp.Ended)))
			}
			provs = append(provs, hp)
		}
	}
	counts := htmlCounts(r)
	title := r.Target
	for _, a := range r.Args {
		title += " " + a
	}
	if r.UpgradeFrom != "" {
		title += " (install and upgrade from " + r.UpgradeFrom + ")"
	}
	return htmlPage.Get().Execute(w, map[string]any{
		"Title":    title,
		"Started":  stamp(r.Started),
		"Seconds":  fmt.Sprintf("%.2f", r.Seconds),
		"Max":      fmt.Sprintf("%.2f", max),
		"Partial":  r.Partial,
		"Counts":   counts,
		"Cells":    len(r.Results),
		"Clusters": len(rows),
		"Columns":  cols,
		"Rows":     rows,
		"Prov":     provs,
		"Skipped":  r.Skipped,
		// the upgrade axis
		"PathGroups":  groups,
		"Upgrades":    upgrades,
		"UpgradeFrom": r.UpgradeFrom,
	})
}

// htmlColumns are the report's columns: per path (one without the upgrade axis), each target
// followed by the steps any cluster reported for it on that path; and the paths' column groups.
func htmlColumns(r *Report, colPath func(Result) string) ([]htmlColumn, []htmlPathGroup) {
	hasPaths := r.HasPaths()
	paths := []string{""}
	if hasPaths {
		paths = r.Paths()
	}
	var cols []htmlColumn
	var groups []htmlPathGroup
	for _, p := range paths {
		first := len(cols)
		for _, t := range r.Targets() {
			cols = append(cols, htmlColumn{Path: p, Target: t})
			seen := map[string]bool{}
			for _, res := range r.Results {
				if r.TargetOf(res) != t || colPath(res) != p {
					continue
				}
				for _, s := range res.Steps {
					if !seen[s.Name] {
						seen[s.Name] = true
						cols = append(cols, htmlColumn{Path: p, Target: t, Step: s.Name})
					}
				}
			}
		}
		if hasPaths {
			label := p
			if p == PathUpgrade && r.UpgradeFrom != "" {
				label = "upgrade from " + r.UpgradeFrom
			}
			groups = append(groups, htmlPathGroup{Path: p, Label: label, Span: len(cols) - first})
		}
	}
	return cols, groups
}

// fillCell fills the cell of column c with res: its own status in the target's column, a step's in
// that step's column.
func fillCell(cell *htmlCell, c htmlColumn, res Result, pct func(float64) float64) {
	if c.Step == "" {
		cell.Class, cell.Label = string(res.Status), string(res.Status)
		if res.Flaky() {
			cell.Class, cell.Label = "flaky", fmt.Sprintf("flaky (%d attempts)", res.Attempts)
		}
		cell.Message, cell.Seconds, cell.Pct = res.Message, fmt.Sprintf("%.2f", res.Seconds), pct(res.Seconds)
		cell.Log, cell.Artifacts = res.Log, res.Artifacts
		if res.Upgrade != nil {
			cell.Upgrade = res.Upgrade.Verdict()
		}
		if res.FailingStep != "" {
			cell.Why = "at " + res.FailingStep
		} else if !res.Status.OK() {
			cell.Why = firstLine(res.Message)
		}
		if !res.Status.OK() {
			cell.Open = res.Log
			if res.Artifacts != "" {
				cell.Open = res.Artifacts + "/"
			}
		}
		return
	}
	for _, s := range res.Steps {
		if s.Name != c.Step {
			continue
		}
		cell.Class, cell.Label, cell.Message = string(s.Status), string(s.Status), s.Message
		cell.Seconds, cell.Pct = fmt.Sprintf("%.2f", s.Seconds), pct(s.Seconds)
		if !s.Status.OK() {
			cell.Why = firstLine(s.Message)
			cell.Open = res.Log
			if res.Artifacts != "" {
				cell.Open = res.Artifacts + "/"
			}
		}
	}
}

// htmlCounts are the report's counts by status, flaky results apart from the passed ones.
func htmlCounts(r *Report) []htmlCount {
	var counts []htmlCount
	c := r.Counts()
	flaky := 0
	for _, res := range r.Results {
		if res.Flaky() {
			flaky++
		}
	}
	for _, s := range []Status{Passed, Failed, TimedOut, Unreachable, Cancelled, Skipped} {
		n := c[s]
		if s == Passed {
			n -= flaky
		}
		if n > 0 {
			counts = append(counts, htmlCount{n, string(s)})
		}
		if s == Passed && flaky > 0 {
			counts = append(counts, htmlCount{flaky, "flaky"})
		}
	}
	return counts
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
