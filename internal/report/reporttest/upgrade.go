package reporttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cellJSON is what CheckUpgradeAxis reads of a cell in report.json (this package does not import
// the report package, whose own tests use it).
type cellJSON struct {
	Cluster, Path, Status, Log, Artifacts string
	Upgrade                               *struct {
		From    string
		UIDKept bool
		UID     string
		Data    string
	}
}

// CheckUpgradeAxis opens dir/index.html of a report with the upgrade axis in headless Chromium
// and checks, against dir/report.json, what a person sees: the path header groups the columns
// (install, then "upgrade from <REF>"), each cluster's row has both cells under their headers,
// coloured by status, the upgrade cells say whether the instance kept its UID and its data, a
// failed cell opens its artifacts (or log), and the Upgrade table has a row per upgrade cell with
// the UID verdict coloured. It keeps a screenshot named shot and returns its path.
func CheckUpgradeAxis(t *testing.T, dir, shot string) string {
	t.Helper()
	r := readUpgradeReport(t, dir)
	c := StartChromium(t, "file://"+filepath.Join(dir, "index.html"))
	c.WaitFor(`document.readyState === 'complete' && document.querySelector('#grid')`)
	page := readUpgradePage(c)
	if len(page.Groups) != 2 || page.Groups[0].Path != "install" || page.Groups[1].Path != "upgrade" ||
		!strings.Contains(page.Groups[1].Label, "upgrade from "+r.UpgradeFrom) {
		t.Fatalf("path header: %+v", page.Groups)
	}
	seen := 0
	for _, res := range r.Results {
		for _, x := range page.Cells {
			if x.Cluster != res.Cluster || x.Path != res.Path {
				continue
			}
			seen++
			checkUpgradeCell(t, page, res, x)
		}
		if res.Upgrade != nil {
			checkUpgradeRow(t, page, res)
		}
	}
	if seen != len(r.Results) {
		t.Errorf("%d cells rendered, want %d", seen, len(r.Results))
	}
	return c.Screenshot(shot)
}

// upgradeReport is what CheckUpgradeAxis reads of report.json.
type upgradeReport struct {
	UpgradeFrom string
	Results     []cellJSON
}

// readUpgradeReport reads dir/report.json.
func readUpgradeReport(t *testing.T, dir string) upgradeReport {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r upgradeReport
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// upgradePage is what a person sees of a report with the upgrade axis: the path headers, the
// cells of the grid (with where they are drawn) and the rows of the Upgrade table.
type upgradePage struct {
	Groups []struct {
		Path, Label string
		Left, Right float64
	}
	Cells    []pageCell
	Upgrades []struct{ Cluster, UID, Data, UIDColor string }
}

// pageCell is a cell of the grid as drawn: its status and colour, its upgrade line, the link it
// opens and its left edge.
type pageCell struct {
	Cluster, Path, Status, Background, Upgrade, Open string
	Left                                             float64
}

// readUpgradePage reads the page's path headers, grid cells and Upgrade table rows in the browser.
func readUpgradePage(c *Chromium) upgradePage {
	var page upgradePage
	c.Eval(`(() => ({
	  groups: [...document.querySelectorAll('#grid tr.paths th.path')].map(th => { const r = th.getBoundingClientRect();
	    return {Path: th.dataset.path, Label: th.innerText, Left: r.left, Right: r.right}; }),
	  cells: [...document.querySelectorAll('#grid td.cell[data-step=""]')].map(td => { const u = td.querySelector('.upg'), a = td.querySelector('a.open');
	    return {Cluster: td.parentElement.dataset.cluster, Path: td.dataset.path, Status: td.dataset.status,
	      Background: getComputedStyle(td).backgroundColor, Upgrade: u && u.offsetWidth > 0 ? u.innerText : '', Open: a ? a.href : '',
	      Left: td.getBoundingClientRect().left}; }),
	  upgrades: [...document.querySelectorAll('#upgrade tr[data-cluster]')].map(tr => { const uid = tr.querySelector('td.uid'), d = tr.querySelector('td.data');
	    return {Cluster: tr.dataset.cluster, UID: uid ? uid.innerText : '', Data: d ? d.innerText : '', UIDColor: uid ? getComputedStyle(uid).color : ''}; })
	}))()`, &page)
	return page
}

// statusColours are the cells' background colours by status.
var statusColours = map[string]string{"passed": "rgb(45, 164, 78)", "failed": "rgb(207, 34, 46)", "timeout": "rgb(188, 76, 0)",
	"unreachable": "rgb(87, 96, 106)", "cancelled": "rgb(140, 149, 159)"}

// checkUpgradeCell checks the cell x of result res: under its path's header, coloured by status,
// saying what the upgrade kept, and, when not passed, opening its artifacts (or log).
func checkUpgradeCell(t *testing.T, page upgradePage, res cellJSON, x pageCell) {
	t.Helper()
	g := page.Groups[0]
	if x.Path == "upgrade" {
		g = page.Groups[1]
	}
	if x.Left < g.Left-1 || x.Left > g.Right {
		t.Errorf("%s/%s: the cell (x=%.0f) is not under its path's header (%.0f..%.0f)", x.Cluster, x.Path, x.Left, g.Left, g.Right)
	}
	if x.Status != res.Status || x.Background != statusColours[res.Status] {
		t.Errorf("%s/%s: %s %s, want %s", x.Cluster, x.Path, x.Status, x.Background, res.Status)
	}
	if u := res.Upgrade; u != nil {
		uid := "uid kept"
		if !u.UIDKept {
			uid = "uid NOT kept"
			if u.UID == "" {
				uid = "uid not checked"
			}
		}
		if !strings.Contains(x.Upgrade, "from "+u.From) || !strings.Contains(x.Upgrade, uid) || u.Data != "" && !strings.Contains(x.Upgrade, "data "+u.Data) {
			t.Errorf("%s/%s shows %q; the report says from %s, uid kept %v, data %q", x.Cluster, x.Path, x.Upgrade, u.From, u.UIDKept, u.Data)
		}
	}
	if res.Status != "passed" {
		want := res.Log
		if res.Artifacts != "" {
			want = res.Artifacts + "/"
		}
		if !strings.HasSuffix(x.Open, want) {
			t.Errorf("%s/%s: the failed cell opens %q, want …%s", x.Cluster, x.Path, x.Open, want)
		}
	}
}

// checkUpgradeRow checks that the Upgrade table has a row for res's cluster with its UID verdict,
// coloured, and its data.
func checkUpgradeRow(t *testing.T, page upgradePage, res cellJSON) {
	t.Helper()
	u := res.Upgrade
	found := false
	for _, row := range page.Upgrades {
		if row.Cluster != res.Cluster {
			continue
		}
		found = true
		want, colour := "kept", "rgb(26, 127, 55)"
		if !u.UIDKept {
			want, colour = "NOT kept", "rgb(207, 34, 46)"
			if u.UID == "" {
				want = "not checked"
			}
		}
		if row.UID != want || row.UIDColor != colour || u.Data != "" && row.Data != u.Data {
			t.Errorf("Upgrade table %s: uid %q (%s) data %q, want %q (%s) %q", row.Cluster, row.UID, row.UIDColor, row.Data, want, colour, u.Data)
		}
	}
	if !found {
		t.Errorf("no row of %s in the Upgrade table", res.Cluster)
	}
}
