package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/report/reporttest"
)

// The HTML report is checked the way a person sees it: headless Chromium (Debian's chromium,
// installed by hack/test.sh) renders index.html of a failing matrix, the test reads the rendered
// DOM and computed styles over the DevTools protocol, clicks a failed cell with a real mouse event
// and keeps a screenshot ($NUV_TEST_ARTIFACTS/report.png, else in the test's temporary directory).

// renderedCell is what the page shows for one cell of the grid.
type renderedCell struct {
	Cluster, Target, Step, Status, Background, Text, Open string
	Bar, Track                                            float64
}

const readGrid = `(() => {
  const cells = [...document.querySelectorAll('#grid td.cell')].map(td => {
    const bar = td.querySelector('.bar span'), track = td.querySelector('.bar'), open = td.querySelector('a.open');
    return {Cluster: td.parentElement.dataset.cluster, Target: td.dataset.target, Step: td.dataset.step,
      Status: td.dataset.status, Background: getComputedStyle(td).backgroundColor, Text: td.innerText,
      Open: open ? open.href : '', Bar: bar ? bar.getBoundingClientRect().width : 0,
      Track: track ? track.getBoundingClientRect().width : 0};
  });
  const rows = [...document.querySelectorAll('#grid tr[data-cluster]')].map(tr => {
    const th = tr.querySelector('th.cluster'), badge = th.querySelector('.badge');
    return {cluster: tr.dataset.cluster, badge: badge && badge.offsetWidth > 0 ? badge.innerText : '',
      stripes: getComputedStyle(th).backgroundImage.includes('repeating-linear-gradient'), meta: th.innerText};
  });
  return {cells, rows, summary: document.querySelector('#summary').innerText};
})()`

func TestIntegrationHTMLReportInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	dir := t.TempDir()
	r := sample()
	// A failing matrix with its artifacts and logs on disk, as all-kubes leaves it.
	for _, res := range r.Results {
		os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
		os.WriteFile(filepath.Join(dir, res.Log), []byte("log of "+res.Cluster+"\n"), 0o644)
		if res.Artifacts != "" {
			os.MkdirAll(filepath.Join(dir, res.Artifacts), 0o755)
			os.WriteFile(filepath.Join(dir, res.Artifacts, "events.txt"), []byte("events"), 0o644)
		}
	}
	if err := WriteDir(dir, r); err != nil {
		t.Fatal(err)
	}
	url := "file://" + filepath.Join(dir, HTMLFile)
	c := reporttest.StartChromium(t, url)
	c.WaitFor(`document.readyState === 'complete' && document.querySelector('#grid')`)

	var page struct {
		Cells []renderedCell
		Rows  []struct {
			Cluster, Badge, Meta string
			Stripes              bool
		}
		Summary string
	}
	c.Eval(readGrid, &page)
	cells := map[string]renderedCell{}
	for _, x := range page.Cells {
		cells[x.Cluster+"/"+x.Step] = x
	}
	colours := map[string]string{
		"passed": "rgb(45, 164, 78)", "failed": "rgb(207, 34, 46)", "flaky": "rgb(227, 160, 8)",
		"timeout": "rgb(188, 76, 0)", "unreachable": "rgb(87, 96, 106)", "none": "rgb(246, 248, 250)",
	}
	for _, tc := range []struct {
		key, status string
		bar         float64 // expected bar width relative to the track (slowest cell = 1)
		open        string  // where one click on the cell goes
	}{
		{"gke1/", "failed", 8.5 / 30, "/artifacts/gke1/"},
		{"gke1/whisk-redis", "failed", 8.0 / 30, "/artifacts/gke1/"},
		{"gke1/crd-validation", "passed", 0.4 / 30, ""},
		{"eks1/", "passed", 6.25 / 30, ""},
		{"flaky/", "flaky", 3.0 / 30, ""},
		{"slow<&>/", "timeout", 1, "/logs/slow.log"},
		{"down/", "unreachable", 2.0 / 30, "/logs/down.log"},
		{"down/whisk-redis", "none", 0, ""},
	} {
		x, ok := cells[tc.key]
		if !ok {
			t.Errorf("no rendered cell %s", tc.key)
			continue
		}
		if x.Status != tc.status || x.Background != colours[tc.status] {
			t.Errorf("%s: status %s colour %s, want %s %s", tc.key, x.Status, x.Background, tc.status, colours[tc.status])
		}
		if tc.status != "none" {
			if x.Track <= 0 || abs(x.Bar/x.Track-tc.bar) > 0.03 && x.Bar > 2.5 {
				t.Errorf("%s: duration bar %.1f of %.1f px, want %.2f of the track", tc.key, x.Bar, x.Track, tc.bar)
			}
		}
		if tc.open == "" && x.Open != "" || tc.open != "" && !strings.HasSuffix(x.Open, tc.open) {
			t.Errorf("%s: the cell opens %q, want …%s", tc.key, x.Open, tc.open)
		}
	}
	simulated := map[string]bool{}
	for _, row := range page.Rows {
		simulated[row.Cluster] = row.Badge == "simulated" && row.Stripes
	}
	if !simulated["eks1"] || !simulated["flaky"] || simulated["gke1"] {
		t.Errorf("simulated rows marked: %v", simulated)
	}
	for _, row := range page.Rows {
		if row.Cluster == "eks1" && (!strings.Contains(row.Meta, "type eks by providerID") || !strings.Contains(row.Meta, "local/eks, 3 simulated nodes")) {
			t.Errorf("eks1 row header: %q", row.Meta)
		}
	}
	if !strings.Contains(page.Summary, "1 failed") || !strings.Contains(page.Summary, "1 flaky") {
		t.Errorf("summary: %q", page.Summary)
	}

	// The screenshot a person would see.
	c.Screenshot("report-failing-matrix.png")

	// One click on the failed cell opens its artifacts.
	var box struct{ X, Y float64 }
	c.Eval(`(() => { const a = document.querySelector('#grid tr[data-cluster="gke1"] td.cell[data-step=""] a.open');
	  a.scrollIntoView(); const r = a.getBoundingClientRect(); return {X: r.left + r.width / 2, Y: r.top + r.height / 2}; })()`, &box)
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		c.Call("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": box.X, "y": box.Y, "button": "left", "clickCount": 1}, nil)
	}
	c.WaitFor(`location.href.endsWith('/artifacts/gke1/') && document.body && document.body.innerText.includes('events.txt')`)
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
