package report

import (
	"fmt"
	"html/template"
	"io"
	"time"
)

// htmlPage is the static matrix page: one row per cluster, one column for the target and one per
// step any cluster reported, each cell coloured by status. It has no scripts and no external assets.
var htmlPage = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>nuv all-kubes {{.Target}}</title>
<style>
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #999; padding: 0.3em 0.6em; text-align: left; }
td.passed { background: #b7e4b0; }
td.failed { background: #f4a6a6; }
td.timeout { background: #f7c58b; }
td.unreachable { background: #c9c9c9; }
td.cancelled { background: #f2e394; }
td.skipped, td.none { background: #f4f4f4; color: #777; }
.msg { font-size: 0.85em; color: #333; }
</style>
</head>
<body>
<h1>nuv all-kubes {{.Target}}{{range .Args}} {{.}}{{end}}</h1>
<p>Started {{.Started}}, {{.Seconds}} s.{{if .Partial}} <strong>Partial report: the run was interrupted.</strong>{{end}}
{{range .Counts}} {{.N}} {{.Status}}{{end}}</p>
<table>
<tr><th>cluster</th><th>type</th><th>server version</th><th>{{.Target}}</th>{{range .Steps}}<th>{{.}}</th>{{end}}<th>duration</th><th>attempts</th><th>log</th><th>artifacts</th></tr>
{{range .Rows}}<tr id="{{.Cluster}}"><td>{{.Cluster}}</td><td>{{.Type}}</td><td>{{.ServerVersion}}</td><td class="{{.Status}}" title="{{.Message}}">{{.Status}}{{if .FailingStep}}<div class="msg">at {{.FailingStep}}</div>{{end}}</td>{{range .Cells}}<td class="{{.Status}}" title="{{.Message}}">{{if eq .Status "none"}}&ndash;{{else}}{{.Status}}{{end}}</td>{{end}}<td>{{.Seconds}} s</td><td>{{.Attempts}}</td><td>{{if .Log}}<a href="{{.Log}}">log</a>{{end}}</td><td>{{if .Artifacts}}<a href="{{.Artifacts}}/">artifacts</a>{{end}}</td></tr>
{{end}}</table>
</body>
</html>
`))

type htmlCell struct {
	Status  string
	Message string
}

type htmlRow struct {
	Result
	Cells []htmlCell
}

type htmlCount struct {
	N      int
	Status Status
}

// WriteHTML writes the static matrix page.
func WriteHTML(w io.Writer, r *Report) error {
	var steps []string
	seen := map[string]bool{}
	for _, res := range r.Results {
		for _, s := range res.Steps {
			if !seen[s.Name] {
				seen[s.Name] = true
				steps = append(steps, s.Name)
			}
		}
	}
	var rows []htmlRow
	for _, res := range r.Results {
		byName := map[string]Step{}
		for _, s := range res.Steps {
			byName[s.Name] = s
		}
		row := htmlRow{Result: res}
		for _, name := range steps {
			if s, ok := byName[name]; ok {
				row.Cells = append(row.Cells, htmlCell{Status: string(s.Status), Message: s.Message})
			} else {
				row.Cells = append(row.Cells, htmlCell{Status: "none"})
			}
		}
		rows = append(rows, row)
	}
	var counts []htmlCount
	c := r.Counts()
	for _, s := range []Status{Passed, Failed, TimedOut, Unreachable, Cancelled, Skipped} {
		if c[s] > 0 {
			counts = append(counts, htmlCount{c[s], s})
		}
	}
	return htmlPage.Execute(w, map[string]any{
		"Target":  r.Target,
		"Args":    r.Args,
		"Started": r.Started.UTC().Format(time.RFC3339),
		"Seconds": fmt.Sprintf("%.2f", r.Seconds),
		"Partial": r.Partial,
		"Counts":  counts,
		"Steps":   steps,
		"Rows":    rows,
	})
}
